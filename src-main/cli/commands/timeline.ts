import { calibrationTimeline, type CalibrationTimelineResult } from '../../../src-shared/drift/calibration-timeline';
import {
  blockBootstrapReplicatesOption,
  frameCountOption,
  GATE_OPTIONS,
  parseCommandArgs,
  seedOption,
} from '../cli-args';
import { runOverTrace } from '../trace-command';
import { UsageError } from '../usage-error';

function reportLines(r: CalibrationTimelineResult, trace: string): string[] {
  const names = Object.keys(r.metrics) as Array<keyof CalibrationTimelineResult['metrics']>;
  const lines = [
    `calibration over time of ${trace}: windows of ${r.windowFrames} frames (the last one to the end) every ${r.strideFrames} (${r.framesPerSecond.toFixed(2)} frames/s), each on its labelled frames with a 95 % moving-block bootstrap interval`,
    ...(r.approximation === undefined ? [] : [r.approximation]),
    ...names.map((n) => `${n}: ${r.metrics[n]}`),
    '',
    `from\tlabelled\t${names.join('\t')}`,
  ];
  r.windows.forEach((w, i) =>
    lines.push(
      [
        `${r.windowSeconds[i]!.toFixed(1)} s`,
        String(w.labelledFrames),
        ...w.values.map((v) =>
          v === null ? 'too few labels' : `${v.value.toFixed(4)} [${v.low.toFixed(4)}, ${v.high.toFixed(4)}]`,
        ),
      ].join('\t'),
    ),
  );
  lines.push('', `change points (${r.changePointMethod}):`);
  if (r.changePoints.length === 0) lines.push('  none');
  r.changePoints.forEach((c, i) =>
    lines.push(
      `  frame ${c.frame} (${r.changePointSeconds[i]!.toFixed(2)} s): accuracy ${c.accuracyBefore.toFixed(3)} -> ${c.accuracyAfter.toFixed(3)}, p = ${c.pValue.toFixed(3)}`,
    ),
  );
  return lines;
}

/** knob timeline TRACE: calibration over time, with the change points of accuracy. */
export async function timelineCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      'window-frames': { type: 'string' },
      'stride-frames': { type: 'string' },
      replicates: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob timeline takes one trace file');
  const windowFrames = frameCountOption(values['window-frames'], 'window-frames', 2, 100_000_000);
  const strideFrames = frameCountOption(values['stride-frames'], 'stride-frames', 1, 100_000_000);
  const replicates = blockBootstrapReplicatesOption(values.replicates);
  const seed = seedOption(values.seed);
  return runOverTrace(
    'timeline',
    values,
    positionals[0]!,
    'computing the windows and the change points',
    (trace, settings) => calibrationTimeline({ trace, settings, windowFrames, strideFrames, replicates, seed }),
    (result) => reportLines(result, positionals[0]!),
  );
}
