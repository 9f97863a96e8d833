import { basename, dirname } from 'node:path';
import type * as ort from 'onnxruntime-node';
import { z } from 'zod';
import { ModelSidecarSchema, type ModelOptions, type ModelSidecar } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import { parseJsonText } from '../../../src-shared/json-text';
import { describeIssues, parseWithSchema } from '../../../src-shared/zod-issues';
import { checkTextField } from '../files/text-fields';
import { hasUserFile, readUserText } from '../files/user-files';
import { InputSpecSchema, type InputSpec, type InputSpecSource } from '../../../src-shared/frames/input-spec';
import type { OnnxMetadata } from './onnx-metadata';

/**
 * Where a model's preprocessing and label names come from, in order of precedence: explicit
 * settings, the sidecar `<model>.knob.json`, the ONNX metadata properties `knob.input` and
 * `knob.labels`, and last the input tensor's shape (layout from where the channel axis is, values
 * in [0, 1], no normalisation). The source used is reported with the model.
 */
export function sidecarPath(modelPath: string): string {
  return modelPath.replace(/\.onnx$/i, '') + '.knob.json';
}

export async function readSidecar(modelPath: string): Promise<ModelSidecar | null> {
  const path = sidecarPath(modelPath);
  if (!(await hasUserFile(dirname(path), basename(path)))) return null;
  const raw = parseJsonText(await readUserText(path, 'settings'), path);
  return parseWithSchema(ModelSidecarSchema, raw, { code: 'INVALID_INPUT', what: path });
}

function parseMetadataJson<T>(metadata: OnnxMetadata, key: string, schema: z.ZodType<T>, source: string): T | null {
  const raw = metadata.properties[key];
  if (raw === undefined) return null;
  const value = parseJsonText(raw, `${source}: metadata property ${key}`);
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: metadata property ${key}: ${describeIssues(parsed.error.issues, '(value)')}`,
    );
  return parsed.data;
}

/** The spec implied by a 4-D image input with fixed height, width and channels. */
function specFromShape(input: ort.InferenceSession.ValueMetadata, source: string): InputSpec {
  const shape = input.isTensor ? input.shape : [];
  const describe = `[${shape.join(', ')}]`;
  if (shape.length !== 4)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: input '${input.name}' has shape ${describe}; an image model needs 4 dimensions (give the input spec explicitly or in ${sidecarPath(source)})`,
    );
  const [, a, b, c] = shape;
  const fixed = (d: number | string): d is number => typeof d === 'number' && d > 0;
  const nchw = fixed(a) && (a === 1 || a === 3) && fixed(b) && fixed(c);
  const nhwc = fixed(c) && (c === 1 || c === 3) && fixed(a) && fixed(b);
  if (!nchw && !nhwc) {
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: input '${input.name}' has dynamic or non-image shape ${describe} that cannot be resolved; give width, height and channels explicitly or in ${sidecarPath(source)}`,
    );
  }
  const channels = (nchw ? a : c) as 1 | 3;
  return {
    name: input.name,
    layout: nchw ? 'NCHW' : 'NHWC',
    width: (nchw ? c : b) as number,
    height: (nchw ? b : a) as number,
    channels,
    value_range: [0, 1],
    mean: [0],
    std: [1],
  };
}

export interface ResolvedInput {
  spec: InputSpec;
  source: InputSpecSource;
}

export function resolveInputSpec(
  options: ModelOptions,
  sidecar: ModelSidecar | null,
  metadata: OnnxMetadata,
  session: ort.InferenceSession,
): ResolvedInput {
  const source = options.path;
  const inputs = session.inputMetadata;
  if (inputs.length !== 1)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: the model has ${inputs.length} inputs (${session.inputNames.join(', ')}); one image input is expected`,
    );
  const resolved: ResolvedInput =
    options.input !== undefined
      ? { spec: options.input, source: 'explicit' }
      : sidecar?.input !== undefined
        ? { spec: sidecar.input, source: 'sidecar' }
        : (() => {
            const fromMetadata = parseMetadataJson(metadata, 'knob.input', InputSpecSchema, source);
            return fromMetadata !== null
              ? { spec: fromMetadata, source: 'metadata' as const }
              : { spec: specFromShape(inputs[0], source), source: 'input-shape' as const };
          })();
  checkSpecAgainstModel(resolved.spec, inputs[0], source);
  return resolved;
}

/** A spec that contradicts a fixed dimension of the model's input fails now, not at the first frame. */
export function checkSpecAgainstModel(
  spec: InputSpec,
  input: ort.InferenceSession.ValueMetadata,
  source: string,
): void {
  if (spec.name !== input.name)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: input spec names '${spec.name}' but the model's input is '${input.name}'`,
    );
  if (!input.isTensor) throw new KnobError('INVALID_INPUT', `${source}: input '${input.name}' is not a tensor`);
  if (input.type !== 'float32')
    throw new KnobError('INVALID_INPUT', `${source}: input '${input.name}' is ${input.type}; float32 is supported`);
  const expected =
    spec.layout === 'NCHW' ? [spec.channels, spec.height, spec.width] : [spec.height, spec.width, spec.channels];
  const shape = input.shape;
  if (shape.length !== 4)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: input '${input.name}' has ${shape.length} dimensions, the spec describes 4`,
    );
  for (let d = 1; d < 4; d++) {
    const actual = shape[d];
    if (typeof actual === 'number' && actual > 0 && actual !== expected[d - 1]) {
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: input '${input.name}' has shape [${shape.join(', ')}], the spec says ${spec.layout} ${spec.channels}x${spec.height}x${spec.width}`,
      );
    }
  }
}

/** The names a model's classes get when nothing names them. */
export function generatedLabelNames(classCount: number): string[] {
  return Array.from({ length: classCount }, (_, k) => `class ${k}`);
}

export interface ResolvedLabels {
  names: string[];
  source: InputSpecSource | 'generated';
}

export function resolveLabels(
  options: ModelOptions,
  sidecar: ModelSidecar | null,
  metadata: OnnxMetadata,
  classCount: number,
): ResolvedLabels {
  const fromMetadata = parseMetadataJson(metadata, 'knob.labels', z.array(z.string()), options.path);
  const resolved: ResolvedLabels =
    options.labels !== undefined
      ? { names: options.labels, source: 'explicit' }
      : sidecar?.labels !== undefined
        ? { names: sidecar.labels, source: 'sidecar' }
        : fromMetadata !== null
          ? { names: fromMetadata, source: 'metadata' }
          : { names: generatedLabelNames(classCount), source: 'generated' };
  const file = resolved.source === 'sidecar' ? sidecarPath(options.path) : options.path;
  resolved.names.forEach((name, i) => checkTextField(name, file, `label name ${i} (${resolved.source})`));
  if (resolved.names.length !== classCount) {
    throw new KnobError(
      'INVALID_INPUT',
      `${options.path}: ${resolved.names.length} label names (${resolved.source}) for ${classCount} classes`,
    );
  }
  return resolved;
}
