import { writeOutputFiles } from '../../core/files/output-files';
import { fitHeadsOnTrace } from '../../core/use-cases/fit-heads';
import { DEFAULT_MODEL_PATH } from '../../core/model-card/default-model';
import { headsCardMarkdown } from '../../../src-shared/heads/heads-card';
import { checkOutputFile, parseCommandArgs, seedOption } from '../cli-args';
import { commandCall } from '../command-call';
import { UsageError } from '../usage-error';
import { basename, dirname } from 'node:path';

/**
 * knob fit-heads: Knob heads (static, dynamic, u*) fitted on a classifier's features (issue 31),
 * written as a Knob-native model with its card beside it (NEW.card.json, and NEW.card.md, which is
 * also printed): the held-out figures of the heads against the model as it recorded the trace.
 */
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
  const stem = basename(values.out).replace(/\.onnx$/, '');
  const markdown = headsCardMarkdown(card);
  await writeOutputFiles(dirname(values.out), [
    { name: basename(values.out), data: bytes },
    { name: `${stem}.card.json`, data: `${JSON.stringify(card, null, 1)}\n` },
    { name: `${stem}.card.md`, data: markdown },
  ]);
  if (values.json) process.stdout.write(`${JSON.stringify({ out: values.out, ...card })}\n`);
  else process.stdout.write(`${markdown}\nwrote ${values.out}, with ${stem}.card.json and ${stem}.card.md beside it\n`);
  return 0;
}
