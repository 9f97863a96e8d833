import { z } from 'zod';
import type { HeadsCard } from '../heads/heads-card';
import { FilePathSchema } from './file-path';

/**
 * "Make a Knob model" in the desk (issue 31; contract.ts 'model.makeKnob'): the loaded classifier
 * made a Knob model over a labelled dataset (make-knob-model.ts, as `knob fit-heads --data`), the
 * new model and its card written to `outPath`; the answer is the card.
 */

export const MakeKnobModelParamsSchema = z.strictObject({
  /** Labelled images: an ImageFolder, a folder with manifest.csv, .npz or IDX. */
  dataPath: FilePathSchema,
  /** The new model, NEW.onnx (NEW.card.json and NEW.card.md beside it). */
  outPath: FilePathSchema.refine((p) => p.toLowerCase().endsWith('.onnx'), { message: 'must name an .onnx file' }),
  /** The feature tensor of a classifier without a `features` output (absent: the final layer's input). */
  featuresNode: z.string().min(1).max(1000).optional(),
  seed: z.number().int().min(0).max(0xffffffff).default(0),
});

const fraction = z.number().min(0).max(1);
const BranchFiguresSchema = z.strictObject({
  frames: z.number().int().nonnegative(),
  accuracyStatic: fraction,
  accuracyDynamic: fraction,
  accuracyFused: fraction,
  eceFused: fraction,
  aurocOracleAdvantage: fraction.nullable(),
  meanUClean: fraction.nullable(),
  meanUCorrupted: fraction.nullable(),
});

export const HeadsCardSchema = z.strictObject({
  model: z.strictObject({ path: z.string(), sha256: z.string() }),
  trace: z.strictObject({
    path: z.string(),
    sha256: z.string(),
    labelledFrames: z.number().int().nonnegative(),
    featureWidth: z.number().int().positive(),
  }),
  seed: z.number().int().nonnegative(),
  split: z.string(),
  steps: z.array(z.string()),
  validation: z.strictObject({
    heads: BranchFiguresSchema,
    recorded: BranchFiguresSchema.extend({ contract: z.string() }),
  }),
  fitSeconds: z.number().nonnegative(),
}) satisfies z.ZodType<HeadsCard>;

/** Whether the features were recorded by this make, or kept from an earlier one (the feature cache). */
export const FEATURES_FROM = ['recorded', 'cache'] as const;
export type FeaturesFrom = (typeof FEATURES_FROM)[number];

export const MadeKnobModelSchema = z.strictObject({
  path: z.string(),
  card: HeadsCardSchema,
  featuresFrom: z.enum(FEATURES_FROM),
});
