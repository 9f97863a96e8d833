import { writeOutputFiles } from '../../core/files/output-files';
import { fitHeadsOnTrace, type HeadsCard } from '../../core/use-cases/fit-heads';
import { DEFAULT_MODEL_PATH } from '../../core/model-card/default-model';
import type { BranchFigures } from '../../../src-shared/heads/knob-heads';
import { checkOutputFile, parseCommandArgs, seedOption } from '../cli-args';
import { commandCall } from '../command-call';
import { UsageError } from '../usage-error';
import { basename, dirname } from 'node:path';

/**
 * knob fit-heads: Knob heads (static, dynamic, u*) fitted on a classifier's features (issue 31),
 * written as a Knob-native model with its card beside it (NEW.card.json): the held-out figures of
 * the heads against the model as it recorded the trace.
 */
function cardLines(card: HeadsCard): string[] {
  const percent = (v: number) => `${(100 * v).toFixed(2)} %`;
  const row = (name: string, f: BranchFigures) =>
    `  ${name.padEnd(30)} ${percent(f.accuracyStatic).padStart(8)} ${percent(f.accuracyDynamic).padStart(8)} ${percent(f.accuracyFused).padStart(8)} ${f.eceFused.toFixed(4).padStart(8)} ${(f.aurocOracleAdvantage?.toFixed(3) ?? '—').padStart(7)} ${(f.meanUClean?.toFixed(3) ?? '—').padStart(8)} ${(f.meanUCorrupted?.toFixed(3) ?? '—').padStart(9)}`;
  return [
    `${card.split}; fitted in ${card.fitSeconds.toFixed(1)} s`,
    ...card.steps.map((s) => `  ${s}`),
    `held out (${card.validation.heads.frames} frames):  static  dynamic    fused  ECE fused  AUROC u*  u* clean  u* corrupted`,
    row('fitted heads', card.validation.heads),
    row(`as recorded (${card.validation.recorded.contract})`, card.validation.recorded),
    '  (fused at g = u*; ECE top-label, 15 equal-width bins; AUROC of u* for the oracle advantage, CE(z_dyn) < CE(z_static))',
  ];
}

export async function fitHeadsCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    model: { type: 'string' },
    trace: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (values.model === undefined || values.trace === undefined || values.out === undefined)
    throw new UsageError(
      '--model M (with a features output: knob features), --trace T and --out NEW.onnx are required',
    );
  if (!values.out.endsWith('.onnx')) throw new UsageError(`--out names an .onnx file, got '${values.out}'`);
  await checkOutputFile(values.out);
  const call = commandCall('fit-heads', values.json === true);
  const { bytes, card } = await fitHeadsOnTrace({
    modelPath: values.model === 'default' ? DEFAULT_MODEL_PATH : values.model,
    tracePath: values.trace,
    seed: seedOption(values.seed),
    signal: call.signal,
    onProgress: (stage, done, total) => call.progress(`fitting the ${stage}`, done, total),
  }).finally(() => call.dispose());
  const cardName = `${basename(values.out).replace(/\.onnx$/, '')}.card.json`;
  await writeOutputFiles(dirname(values.out), [
    { name: basename(values.out), data: bytes },
    { name: cardName, data: `${JSON.stringify(card, null, 1)}\n` },
  ]);
  if (values.json) process.stdout.write(`${JSON.stringify({ out: values.out, ...card })}\n`);
  else process.stdout.write(`${[...cardLines(card), `wrote ${values.out} and ${cardName} beside it`].join('\n')}\n`);
  return 0;
}
