import { z } from 'zod';

/**
 * What a model expects as input (ARCHITECTURE.md, "Models the app accepts"): tensor name, layout,
 * size, channels, and the affine map from 8-bit pixels b to model values:
 *   x = (lo + (b / 255) (hi - lo) - mean_c) / std_c,  [lo, hi] = value_range.
 * The same spec drives preprocessing in the inference process and the renderer's frame downscaler.
 */
export const InputSpecSchema = z.strictObject({
  name: z.string().min(1),
  layout: z.enum(['NCHW', 'NHWC']),
  width: z.number().int().positive().max(8192),
  height: z.number().int().positive().max(8192),
  channels: z.union([z.literal(1), z.literal(3)]),
  value_range: z
    .tuple([z.number(), z.number()])
    .refine(([lo, hi]) => hi > lo, 'value_range must be [lo, hi] with hi > lo'),
  mean: z.array(z.number()).min(1),
  std: z.array(z.number().positive('std must be positive')).min(1),
});
export type InputSpec = z.infer<typeof InputSpecSchema>;

/** Where the preprocessing came from; the app always reports it. */
export const INPUT_SPEC_SOURCES = ['explicit', 'sidecar', 'metadata', 'input-shape'] as const;
export type InputSpecSource = (typeof INPUT_SPEC_SOURCES)[number];
