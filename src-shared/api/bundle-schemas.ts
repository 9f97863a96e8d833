import { z } from 'zod';
import { FilePathSchema } from './file-path';
import { BUNDLE_EXTENSION, BUNDLE_PATH_RULE } from './file-kinds';

/** 'bundle.export' (contract.ts): where the bundle goes, and what was written. */
export const BundleExportParamsSchema = z.strictObject({
  /** NAME.knob.zip: NAME names the bundle (and its Triton model). */
  path: FilePathSchema.refine((p) => p.endsWith(BUNDLE_EXTENSION), BUNDLE_PATH_RULE),
  /** The model file goes into the bundle (its SHA-256 is recorded either way). */
  includeModel: z.boolean().default(true),
});

export const BundleExportedSchema = z.strictObject({
  path: z.string(),
  bytes: z.number(),
  members: z.number(),
  /** What deploy/ holds, or why it has no step graph. */
  deploy: z.string(),
});
