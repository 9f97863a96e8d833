import { writeOutputFile } from '../../core/files/output-files';
import {
  CORRUPTION_NAMES,
  corruptionsFor,
  corruptionUnavailable,
  isCorruptionName,
  type CorruptionName,
} from '../../../src-shared/corruptions';
import { InferenceClient } from '../../core/inference/inference-client';
import { resetModeTable, resetTableMarkdown } from '../../core/engine/reset-table';
import { GATE_OPTIONS, gateSettingsFromArgs, positiveInteger, seedOption, parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';
import { describeModel, MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';
import { createProgress } from '../progress';

/** knob table: the paper's Table 2 comparison on Fashion-MNIST-C in reset mode. */
export async function tableCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...MODEL_OPTIONS,
    ...GATE_OPTIONS,
    'images-per-condition': { type: 'string' },
    corruptions: { type: 'string' },
    seed: { type: 'string' },
    'out-md': { type: 'string' },
    'out-json': { type: 'string' },
    intervals: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  });
  const requested = values.corruptions?.split(',');
  for (const name of requested ?? [])
    if (!isCorruptionName(name))
      throw new UsageError(`--corruptions takes names from ${CORRUPTION_NAMES.join(', ')}; '${name}' is not one`);
  const settings = await gateSettingsFromArgs(values);
  const client = await InferenceClient.start(modelOptionsFromArgs(values));
  try {
    // By default every corruption the model's input can take (no colour corruption on grayscale).
    const channels = client.description.input.channels;
    for (const name of (requested ?? []) as CorruptionName[]) {
      const reason = corruptionUnavailable(name, channels);
      if (reason !== null) throw new UsageError(`--corruptions: ${reason}`);
    }
    const corruptions = (requested as CorruptionName[] | undefined) ?? corruptionsFor(channels);
    if (!values.json) process.stderr.write(`${describeModel(client.description)}\n`);
    const progress = createProgress('table', !values.json);
    const table = await resetModeTable({
      client,
      settings,
      imagesPerCondition: positiveInteger(values['images-per-condition'], 'images-per-condition', 500, 10_000),
      corruptions,
      seed: seedOption(values.seed),
      intervals: values.intervals,
      onProgress: (done, total, label) => progress.update(done, total, label),
    });
    progress.finish();
    const markdown = resetTableMarkdown(table);
    if (values['out-md']) await writeOutputFile(values['out-md'], markdown);
    if (values['out-json']) await writeOutputFile(values['out-json'], `${JSON.stringify(table, null, 1)}\n`);
    process.stdout.write(values.json ? `${JSON.stringify(table)}\n` : markdown);
    return 0;
  } finally {
    await client.close();
  }
}
