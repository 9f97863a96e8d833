import { checkKnobModelOutput, fitHeadsOnTrace, writeKnobModelFiles } from '../../core/use-cases/fit-heads';
import { FEATURE_CACHE_FOLDER, makeKnobModel } from '../../core/use-cases/make-knob-model';
import { DEFAULT_MODEL_PATH } from '../../core/model-card/default-model';
import { headsCardMarkdown } from '../../../src-shared/heads/heads-card';
import { parseCommandArgs, seedOption } from '../cli-args';
import { commandCall } from '../command-call';
import { MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';
import { UsageError } from '../usage-error';
import { basename, join } from 'node:path';
import { defaultDataFolder } from '../../core/files/data-folder';

/**
 * knob fit-heads: Knob heads (static, dynamic, u*) fitted on a classifier's features (issue 31),
 * written as a Knob-native model with its card beside it (NEW.card.json, and NEW.card.md, which is
 * also printed): the held-out figures of the heads against the model as it recorded them. From a
 * labelled dataset (--data: the features exposed and recorded by the command, make-knob-model.ts,
 * as the desk's "Make a Knob model" does) or from a trace the model recorded (--trace).
 */
export async function fitHeadsCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...MODEL_OPTIONS,
    trace: { type: 'string' },
    data: { type: 'string' },
    features: { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (
    values.model === undefined ||
    values.out === undefined ||
    (values.trace === undefined) === (values.data === undefined)
  )
    throw new UsageError('--model M, --out NEW.onnx and one of --data D (labelled images) or --trace T are required');
  const modelOptionsGiven = (Object.keys(MODEL_OPTIONS) as Array<keyof typeof MODEL_OPTIONS>).filter(
    (name) => name !== 'model' && values[name] !== undefined,
  );
  if (values.trace !== undefined && modelOptionsGiven.length > 0)
    throw new UsageError(
      `--${modelOptionsGiven[0]} is for a classifier read with --data; with --trace the model is taken as it recorded T`,
    );
  if (values.features !== undefined && values.data === undefined)
    throw new UsageError('--features NODE names the feature tensor of a classifier read with --data');
  if (!values.out.endsWith('.onnx')) throw new UsageError(`--out names an .onnx file, got '${values.out}'`);
  const modelPath = values.model === 'default' ? DEFAULT_MODEL_PATH : values.model;
  await checkKnobModelOutput(values.out, modelPath);
  const seed = seedOption(values.seed);
  const call = commandCall('fit-heads', values.json === true);
  const made = await (
    values.data === undefined
      ? fitHeadsOnTrace({
          modelPath,
          tracePath: values.trace!,
          seed,
          signal: call.signal,
          onProgress: (stage, done, total) => call.progress(`fitting the ${stage}`, done, total),
        })
      : makeKnobModel(
          {
            model: modelOptionsFromArgs(values),
            dataPath: values.data,
            featuresNode: values.features,
            seed,
            cacheFolder: join(defaultDataFolder(), FEATURE_CACHE_FOLDER),
          },
          call,
        )
  ).finally(() => call.dispose());
  await writeKnobModelFiles(values.out, made, call.signal);
  const stem = basename(values.out).replace(/\.onnx$/, '');
  const featuresFrom = 'featuresFrom' in made ? made.featuresFrom : null;
  if (values.json) process.stdout.write(`${JSON.stringify({ out: values.out, featuresFrom, ...made.card })}\n`);
  else
    process.stdout.write(
      `${headsCardMarkdown(made.card)}\n${featuresFrom === 'cache' ? 'the features as recorded by an earlier make (the feature cache)\n' : ''}wrote ${values.out}, with ${stem}.card.json and ${stem}.card.md beside it\n`,
    );
  return 0;
}
