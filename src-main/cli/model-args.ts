import type { ParseArgsConfig } from 'node:util';
import {
  EXECUTION_PROVIDERS,
  ModelOptionsSchema,
  type ExecutionProviderName,
  type ModelDescription,
  type ModelOptions,
} from '../../src-shared/api/model-options';
import { DEFAULT_MODEL_PATH } from '../core/model-card/default-model';
import { numberOption } from './cli-args';
import { UsageError } from './usage-error';
import { describeIssues } from '../../src-shared/zod-issues';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Options that choose and configure the model, shared by run, table and bench. */
export const MODEL_OPTIONS = {
  model: { type: 'string' },
  'second-model': { type: 'string' },
  contract: { type: 'string' },
  t0: { type: 'string' },
  'u-rule': { type: 'string' },
  input: { type: 'string' },
  labels: { type: 'string' },
  provider: { type: 'string' },
} as const satisfies Options;

export const MODEL_USAGE = `--model M|default [--second-model M2] [--contract auto|knob-native|single-classifier|two-classifiers]
               [--t0 T] [--u-rule entropy|margin] [--input JSON-spec] [--labels a,b,...] [--provider ${EXECUTION_PROVIDERS.join(',')}]`;

export function modelOptionsFromArgs(values: Record<string, string | boolean | undefined>): ModelOptions {
  const path = values.model === undefined || values.model === 'default' ? DEFAULT_MODEL_PATH : String(values.model);
  let input: unknown;
  if (values.input !== undefined) {
    try {
      input = JSON.parse(String(values.input));
    } catch {
      throw new UsageError(
        '--input must be a JSON input spec, e.g. {"name":"x","layout":"NCHW","width":28,"height":28,"channels":1,"value_range":[0,1],"mean":[0],"std":[1]}',
      );
    }
  }
  const providers = values.provider === undefined ? undefined : String(values.provider).split(',');
  if (providers?.some((p) => !(EXECUTION_PROVIDERS as readonly string[]).includes(p)))
    throw new UsageError(`--provider takes a list of ${EXECUTION_PROVIDERS.join(', ')}`);
  const parsed = ModelOptionsSchema.safeParse({
    path,
    secondPath: values['second-model'],
    contract: values.contract ?? 'auto',
    t0: values.t0 === undefined ? undefined : numberOption(values.t0, 't0', 2),
    certaintyRule: values['u-rule'],
    input,
    labels: values.labels === undefined ? undefined : String(values.labels).split(','),
    executionProviders: providers as ExecutionProviderName[] | undefined,
  });
  if (!parsed.success) throw new UsageError(describeIssues(parsed.error.issues, 'model'));
  return parsed.data;
}

/** Lines for stderr: which provider runs, why the others did not, where preprocessing came from. */
export function describeModel(model: ModelDescription): string {
  const skipped = model.skippedProviders.map((s) => `  skipped ${s.name}: ${s.reason}`).join('\n');
  return [
    `model: ${model.paths.join(' + ')} (${model.contract}, ${model.contractSource}; ${model.classCount} classes, labels from ${model.labelsSource})`,
    `input: ${model.input.layout} ${model.input.channels}x${model.input.height}x${model.input.width}, from ${model.inputSource}${model.adapter ? `; adapter T0 ${model.adapter.t0}, u* by ${model.adapter.certaintyRule}` : ''}`,
    `execution provider: ${model.executionProvider}`,
    ...(skipped ? [skipped] : []),
  ].join('\n');
}
