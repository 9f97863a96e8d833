import { checkOutputFile } from '../../core/files/output-files';
import { CORRUPTION_NAMES, isCorruptionName } from '../../../src-shared/corruptions';
import { corruptDataset } from '../../core/datasets/corrupt-dataset';
import { checkOutputFolder } from '../../core/files/output-files';
import { numberInRange, positiveInteger, seedOption, parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';

/** knob corrupt: a corrupted copy of an IDX image set (IDX or PNG). */
export async function corruptCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    input: { type: 'string' },
    corruption: { type: 'string' },
    severity: { type: 'string' },
    seed: { type: 'string' },
    offset: { type: 'string' },
    limit: { type: 'string' },
    out: { type: 'string' },
    'out-dir': { type: 'string' },
    format: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (!values.input) throw new UsageError('--input is required');
  if (!values.corruption || !isCorruptionName(values.corruption))
    throw new UsageError(`--corruption must be one of ${CORRUPTION_NAMES.join(', ')}`);
  const severity = numberInRange(values.severity, 'severity', Number.NaN, { min: 1, max: 5, integer: true });
  if (!Number.isInteger(severity) || severity < 1 || severity > 5)
    throw new UsageError('--severity must be an integer 1..5');
  const format = values.format ?? (values['out-dir'] ? 'png' : 'idx');
  if (format !== 'idx' && format !== 'png') throw new UsageError("--format must be 'idx' or 'png'");
  const out = format === 'png' ? values['out-dir'] : values.out;
  if (!out)
    throw new UsageError(
      format === 'png' ? '--out-dir is required for PNG output' : '--out is required for IDX output',
    );
  const seed = seedOption(values.seed);
  const offset =
    values.offset === undefined
      ? undefined
      : numberInRange(values.offset, 'offset', 0, { min: 0, max: 2 ** 31 - 1, integer: true });
  const limit = values.limit === undefined ? undefined : positiveInteger(values.limit, 'limit', 1);
  // before the images are read: a PNG folder, or the folder of the IDX file
  if (format === 'png') await checkOutputFolder(out);
  else await checkOutputFile(out);
  const progress = !values.json && process.stderr.isTTY;
  const result = await corruptDataset({
    imagesPath: values.input,
    corruption: values.corruption,
    severity,
    seed,
    offset,
    limit,
    out,
    format,
    onProgress: progress ? (done, total) => process.stderr.write(`\rcorrupting ${done}/${total}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  if (values.json)
    process.stdout.write(`${JSON.stringify({ ...result, out, format, corruption: values.corruption, severity })}\n`);
  else
    process.stdout.write(
      `wrote ${result.images} corrupted images (${values.corruption}, severity ${severity}) to ${out}\n`,
    );
  return 0;
}
