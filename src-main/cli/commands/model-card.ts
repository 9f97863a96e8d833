import { writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH } from '../../core/datasets/embedded-dataset';
import { DEFAULT_MODEL_PATH, MODEL_CARD_IMAGES_PER_CONDITION } from '../../core/model-card/default-model';
import { generateModelCard, modelCardMarkdown } from '../../core/model-card/model-card';
import { numberOption } from '../cli-args';

/** knob model-card: regenerates the model card of a Knob-native model. */
export async function modelCardCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      model: { type: 'string' },
      'images-per-condition': { type: 'string' },
      'out-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const modelPath = values.model ?? DEFAULT_MODEL_PATH;
  const progress = !values.json && process.stderr.isTTY;
  const card = await generateModelCard({
    modelPath,
    imagesPath: EMBEDDED_IMAGES_PATH,
    labelsPath: EMBEDDED_LABELS_PATH,
    imagesPerCondition: numberOption(
      values['images-per-condition'],
      'images-per-condition',
      MODEL_CARD_IMAGES_PER_CONDITION,
    ),
    onProgress: progress ? (message) => process.stderr.write(`\rmodel card: ${message.padEnd(24)}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  const outDir = values['out-dir'] ?? dirname(modelPath);
  const stem = basename(modelPath).replace(/\.onnx$/, '');
  await writeFile(join(outDir, `${stem}.card.json`), `${JSON.stringify(card, null, 1)}\n`);
  await writeFile(join(outDir, `${stem}.card.md`), modelCardMarkdown(card));
  if (values.json) process.stdout.write(`${JSON.stringify(card)}\n`);
  else
    process.stdout.write(
      `wrote ${join(outDir, `${stem}.card.md`)} and .card.json; targets met: ${card.targets.filter((t) => t.met).length} of ${card.targets.length}\n`,
    );
  return 0;
}
