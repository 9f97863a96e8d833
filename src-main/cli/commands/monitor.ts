import {
  DEFAULT_FRAME_SIGNALS,
  DEFAULT_KS_BINS,
  DRIFT_DETECTORS,
  FRAME_SIGNAL_NAMES,
  type DriftDetector,
  type FrameSignal,
} from '../../../src-shared/drift';
import { monitorTrace, type MonitorTraceResult } from '../../core/use-cases/monitor-trace';
import {
  frameCountOption,
  frameRangeOption,
  GATE_OPTIONS,
  numberInRange,
  parseCommandArgs,
  seedOption,
} from '../cli-args';
import { runOverTrace } from '../trace-command';
import { UsageError } from '../usage-error';

/** Alarms listed in the text report; --json has them all. */
const ALARM_LINES = 20;

/** A comma list of names from `allowed`, or the usage error that lists them. */
function namesOption<T extends string>(value: unknown, option: string, allowed: readonly T[], fallback: T[]): T[] {
  if (value === undefined) return fallback;
  const names = String(value).split(',');
  const unknown = names.filter((n) => !(allowed as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new UsageError(
      `--${option} takes names from ${allowed.join(', ')}; not ${unknown.map((n) => `'${n}'`).join(', ')}`,
    );
  return [...new Set(names)] as T[];
}

function reportLines(r: MonitorTraceResult, trace: string): string[] {
  const lines = [
    `drift monitor of ${trace}: reference frames ${r.referenceStart}:${r.referenceEnd}, ${r.monitoredFrames} frames monitored at ${r.framesPerSecond.toFixed(2)} frames/s`,
    `false alarms: at most one in ${r.falseAlarmHours} h of unshifted stream in all (each tested signal, its detectors as one alarm: one in ${(r.meanFramesBetweenFalseAlarmsPerSignal / r.framesPerSecond / 3600).toFixed(3)} h)`,
  ];
  for (const s of r.signals) lines.push(`signal ${s.name}: ${s.description}`);
  for (const p of r.pairs) {
    if (p.skipped !== undefined) {
      lines.push(`${p.signal} / ${p.detector}: not tested: ${p.skipped}`);
      continue;
    }
    const c = p.calibration!;
    lines.push(
      `${p.signal} / ${p.identity}: threshold ${c.threshold.toPrecision(4)} (${c.method}; ${c.censoredPaths} of ${c.paths} without an alarm), ${p.alarms} alarm${p.alarms === 1 ? '' : 's'}`,
    );
  }
  if (r.alarms.length === 0) lines.push('no alarm');
  // a signal's detectors restart after its alarm, so a lasting shift alarms again and again: the first ones say when
  r.alarms
    .slice(0, ALARM_LINES)
    .forEach((a, i) =>
      lines.push(
        `alarm at frame ${a.frame} (${r.alarmSeconds[i]!.toFixed(2)} s): ${a.signal}, ${a.detector} ${a.statistic.toPrecision(4)} > ${a.threshold.toPrecision(4)}`,
      ),
    );
  if (r.alarms.length > ALARM_LINES)
    lines.push(`... and ${r.alarms.length - ALARM_LINES} more (--json lists every one)`);
  return lines;
}

/** knob monitor TRACE: drift alarms on what every frame has, labelled or not. */
export async function monitorCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      reference: { type: 'string' },
      'false-alarm-hours': { type: 'string' },
      signals: { type: 'string' },
      detectors: { type: 'string' },
      'window-frames': { type: 'string' },
      'stride-frames': { type: 'string' },
      bins: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob monitor takes one trace file');
  const reference = frameRangeOption(values.reference, 'reference');
  const falseAlarmHours = numberInRange(values['false-alarm-hours'], 'false-alarm-hours', 1, { min: 0.001, max: 24 });
  const signals = namesOption<FrameSignal>(values.signals, 'signals', FRAME_SIGNAL_NAMES, [...DEFAULT_FRAME_SIGNALS]);
  const detectors = namesOption<DriftDetector>(values.detectors, 'detectors', DRIFT_DETECTORS, [...DRIFT_DETECTORS]);
  const windowFrames = frameCountOption(values['window-frames'], 'window-frames', 2, 1_000_000);
  const strideFrames = frameCountOption(values['stride-frames'], 'stride-frames', 1, 1_000_000);
  const bins = numberInRange(values.bins, 'bins', DEFAULT_KS_BINS, { min: 2, max: 1000, integer: true });
  const seed = seedOption(values.seed);
  // a kept-class trace gives its confidence as the kept-class estimate (frame-signals.ts)
  return runOverTrace(
    'monitor',
    values,
    positionals[0]!,
    'calibrating the thresholds and monitoring',
    (trace, settings, signal) =>
      monitorTrace({
        trace,
        settings,
        signals,
        reference,
        falseAlarmHours,
        detectors,
        windowFrames,
        strideFrames,
        bins,
        seed,
        signal,
      }),
    (result) => reportLines(result, positionals[0]!),
  );
}
