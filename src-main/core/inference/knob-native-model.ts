import * as ort from 'onnxruntime-node';
import { z } from 'zod';
import { KnobError } from '../../../src-shared/errors';
import { readInputFile } from '../files/read-input-file';
import { readOnnxMetadata, type OnnxMetadata } from './onnx-metadata';

/**
 * A Knob-native ONNX model (ARCHITECTURE.md contract 1): outputs z_static [N,K], z_dyn [N,K],
 * u_ref [N] or [N,1]. Preprocessing comes from the metadata property knob.input.
 * This is the engine's minimal entry point for the shipped model; execution-provider choice,
 * adapters for other contracts and the inference process arrive with the inference engine.
 */
export const InputSpecSchema = z.object({
  name: z.string(),
  layout: z.enum(['NCHW', 'NHWC']),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  channels: z.union([z.literal(1), z.literal(3)]),
  value_range: z.tuple([z.number(), z.number()]),
  mean: z.array(z.number()),
  std: z.array(z.number()).refine((values) => values.every((v) => v > 0), 'std must be positive'),
});
export type InputSpec = z.infer<typeof InputSpecSchema>;

export interface KnobModelOutputs {
  zStatic: Float32Array;
  zDyn: Float32Array;
  uRef: Float32Array;
}

export interface KnobNativeModel {
  path: string;
  metadata: OnnxMetadata;
  labels: string[];
  input: InputSpec;
  classCount: number;
  session: ort.InferenceSession;
  /** Runs a batch of 8-bit images (N x H x W x C, row-major) through preprocessing and the model. */
  runBytes(images: Uint8Array, count: number): Promise<KnobModelOutputs>;
  close(): Promise<void>;
}

export async function loadKnobNativeModel(path: string): Promise<KnobNativeModel> {
  const bytes = await readInputFile(path);
  const metadata = await readOnnxMetadata(bytes, path);
  const inputRaw = metadata.properties['knob.input'];
  const labelsRaw = metadata.properties['knob.labels'];
  if (inputRaw === undefined || labelsRaw === undefined) throw new KnobError('INVALID_INPUT', `${path}: no knob.input / knob.labels metadata`);
  const input = InputSpecSchema.parse(JSON.parse(inputRaw));
  const labels = z.array(z.string()).parse(JSON.parse(labelsRaw));
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(bytes, { executionProviders: ['cpu'], graphOptimizationLevel: 'all' });
  } catch (error) {
    throw new KnobError('INVALID_INPUT', `${path}: onnxruntime cannot load it (${(error as Error).message})`);
  }
  for (const name of ['z_static', 'z_dyn', 'u_ref']) {
    if (!session.outputNames.includes(name)) throw new KnobError('INVALID_INPUT', `${path}: missing output '${name}' (has ${session.outputNames.join(', ')})`);
  }
  const { width, height, channels } = input;
  const pixels = width * height;
  const [lo, hi] = input.value_range;
  return {
    path,
    metadata,
    labels,
    input,
    classCount: labels.length,
    session,
    async runBytes(images, count) {
      const tensor = new Float32Array(count * pixels * channels);
      for (let n = 0; n < count; n++) {
        for (let p = 0; p < pixels; p++) {
          for (let c = 0; c < channels; c++) {
            const value = lo + (images[(n * pixels + p) * channels + c] / 255) * (hi - lo);
            const normalised = (value - input.mean[c % input.mean.length]) / input.std[c % input.std.length];
            const at = input.layout === 'NCHW' ? (n * channels + c) * pixels + p : (n * pixels + p) * channels + c;
            tensor[at] = normalised;
          }
        }
      }
      const shape = input.layout === 'NCHW' ? [count, channels, height, width] : [count, height, width, channels];
      const results = await session.run({ [input.name]: new ort.Tensor('float32', tensor, shape) });
      return {
        zStatic: results.z_static.data as Float32Array,
        zDyn: results.z_dyn.data as Float32Array,
        uRef: results.u_ref.data as Float32Array,
      };
    },
    close: () => session.release(),
  };
}
