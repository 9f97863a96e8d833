import { basename, dirname, join } from 'node:path';
import { EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH } from '../../core/datasets/embedded-dataset';
import { DEFAULT_MODEL_PATH, MODEL_CARD_IMAGES_PER_CONDITION } from '../../core/model-card/default-model';
import { generateModelCard, modelCardMarkdown } from '../../core/model-card/model-card';
import { checkOutputFolder, writeOutputFiles } from '../../core/files/output-files';
import { positiveInteger, parseCommandArgs } from '../cli-args';

/** knob model-card: regenerates the model card of a Knob-native model. */
export async function modelCardCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    model: { type: 'string' },
    'images-per-condition': { type: 'string' },
    'out-dir': { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const modelPath = values.model ?? DEFAULT_MODEL_PATH;
  const outDir = values['out-dir'] ?? dirname(modelPath);
  // The card takes minutes: a folder the outputs cannot go to fails now, not after the work.
  await checkOutputFolder(outDir);
  const progress = !values.json && process.stderr.isTTY;
  const card = await generateModelCard({
    modelPath,
    imagesPath: EMBEDDED_IMAGES_PATH,
    labelsPath: EMBEDDED_LABELS_PATH,
    imagesPerCondition: positiveInteger(
      values['images-per-condition'],
      'images-per-condition',
      MODEL_CARD_IMAGES_PER_CONDITION,
    ),
    onProgress: progress ? (message) => process.stderr.write(`\rmodel card: ${message.padEnd(24)}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  const stem = basename(modelPath).replace(/\.onnx$/, '');
  await writeOutputFiles(outDir, [
    { name: `${stem}.card.json`, data: `${JSON.stringify(card, null, 1)}\n` },
    { name: `${stem}.card.md`, data: modelCardMarkdown(card) },
  ]);
  if (values.json) process.stdout.write(`${JSON.stringify(card)}\n`);
  else
    process.stdout.write(
      `wrote ${join(outDir, `${stem}.card.md`)} and .card.json; targets met: ${card.targets.filter((t) => t.status === 'met').length} of ${card.targets.length} (${card.targets.filter((t) => t.status === 'inside the noise').length} inside the noise)\n`,
    );
  return 0;
}
