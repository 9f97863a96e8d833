import { checkOutputFolder } from '../../core/files/output-files';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { replayRun } from '../../core/use-cases/replay-run';
import { storedProvenanceOf, unknownProvenance } from '../../core/report/provenance';
import { GATE_OPTIONS, settingsOverTrace, parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';
import { printRunSummary } from './run-summary';
import { commandCall } from '../command-call';

/** knob replay TRACE: the run's outputs again from a recorded trace, with any settings, no model. */
export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
      intervals: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob replay takes one trace file');
  if (!values.out) throw new UsageError('--out DIR is required');
  await checkOutputFolder(values.out);
  const call = commandCall('replay', values.json === true);
  // a kept-class trace replays too: its metrics then carry their bounds against the full trace
  const file = await readTraceFile(
    positionals[0],
    (read, size) => call.progress('reading the trace', read, size),
    'kept classes too',
  ).finally(() => call.dispose());
  const { gate: settings, calibrator } = await settingsOverTrace(values, file);
  // The model, source and schedule are those the trace was made with, when the trace says so.
  const recorded = storedProvenanceOf(file.context);
  const origin = `replay of ${positionals[0]}`;
  const provenance = recorded === null ? unknownProvenance(`trace ${positionals[0]}`, origin) : { ...recorded, origin };
  const { analysis, files } = await replayRun({
    folder: values.out,
    trace: file.trace,
    settings,
    calibrator,
    provenance,
  });
  printRunSummary(values.json === true, {
    intervals: values.intervals === true,
    files,
    settings,
    analysis,
    frames: file.trace.frameCount,
  });
  return 0;
}
