import { checkOutputFile } from '../../core/files/output-files';
import { formatBytes } from '../../core/files/input-limits';
import { compactTrace } from '../../core/use-cases/compact-trace';
import { numberInRange, parseCommandArgs } from '../cli-args';
import { commandCall } from '../command-call';
import { printJson } from '../json-output';
import { UsageError } from '../usage-error';

/** Classes kept a frame unless --keep: 32 of 1,000 holds all but a sliver of a trained model's mass. */
const DEFAULT_KEEP = 32;

/** knob compact TRACE --out OUT: the trace with only its leading classes a frame, bounds and all. */
export async function compactCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    { out: { type: 'string' }, keep: { type: 'string' }, json: { type: 'boolean', default: false } },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob compact takes one trace file');
  if (!values.out) throw new UsageError('--out FILE.arrow is required');
  const keep = numberInRange(values.keep, 'keep', DEFAULT_KEEP, { min: 2, max: 65_535, integer: true });
  await checkOutputFile(values.out);
  const call = commandCall('compact', values.json);
  try {
    const result = await compactTrace({ input: positionals[0]!, output: values.out, keep }, call);
    if (values.json) printJson({ output: values.out, ...result });
    else
      process.stdout.write(
        `${values.out}: ${result.frames} frames, ${result.keep} of ${result.classCount} classes kept a frame, ` +
          `${formatBytes(result.outputBytes)} (${formatBytes(result.inputBytes)} with every class)\n`,
      );
  } finally {
    call.dispose();
  }
  return 0;
}
