import type { CalibratorSpec } from '../../src-shared/calibrators';
import type { GateSettings } from '../../src-shared/gate/gate-settings';
import type { Trace } from '../../src-shared/trace/trace';
import { readTraceFile, type TraceFile } from '../core/recording/trace-arrow';
import { settingsOverTrace, type Values } from './cli-args';
import { commandCall } from './command-call';
import { printJson } from './json-output';

/**
 * A command over one recorded trace that reads no class beyond the kept ones (`knob monitor`,
 * `knob estimate`): the trace read with progress (a kept-class trace too), the knobs over the
 * settings it was recorded with, then `work` with the call's cancel signal; --json prints the
 * result with the trace's path, otherwise its lines.
 */
export async function runOverTrace<Result extends object>(
  command: string,
  values: Values & { json?: boolean },
  path: string,
  stage: string,
  work: (
    trace: Trace,
    settings: GateSettings,
    signal: AbortSignal,
    file: TraceFile,
    /** The output calibrator of --settings (null for none), for a command that shows the output. */
    calibrator: CalibratorSpec | null,
  ) => Result | Promise<Result>,
  lines: (result: Result) => string[],
): Promise<number> {
  const call = commandCall(command, values.json === true);
  let result: Result;
  try {
    const file = await readTraceFile(
      path,
      (read, size) => call.progress('reading the trace', read, size),
      'kept classes too',
    );
    const { gate: settings, calibrator } = await settingsOverTrace(values, file);
    call.progress(stage, 0, null);
    result = await work(file.trace, settings, call.signal, file, calibrator);
  } finally {
    call.dispose();
  }
  if (values.json === true) printJson({ trace: path, ...result });
  else for (const line of lines(result)) process.stdout.write(`${line}\n`);
  return 0;
}
