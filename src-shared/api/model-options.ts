import { z } from 'zod';
import { InputSpecSchema, INPUT_SPEC_SOURCES } from '../frames/input-spec';
import { CERTAINTY_RULES } from '../fusion/gate-target';

/**
 * How a model is opened and what the backend reports about it (ARCHITECTURE.md, "Models the app
 * accepts"). The three contracts:
 *  - knob-native: outputs z_static [N,K], z_dyn [N,K], u_ref [N] or [N,1];
 *  - single-classifier: one [N,K] output z; z_dyn = z, z_static = z / T0, u* from the certainty rule;
 *  - two-classifiers: `path` is the static (conservative) branch, `secondPath` the dynamic one,
 *    u* = 1 - total-variation distance between their softmax outputs.
 */
export const MODEL_CONTRACTS = ['knob-native', 'single-classifier', 'two-classifiers'] as const;
export type ModelContract = (typeof MODEL_CONTRACTS)[number];

/** Every provider the app knows, in the order it prefers them where the platform has them. */
export const EXECUTION_PROVIDERS = ['cuda', 'webgpu', 'dml', 'coreml', 'cpu'] as const;
export type ExecutionProviderName = (typeof EXECUTION_PROVIDERS)[number];

const filePath = z.string().min(1).max(4096);

export const ModelOptionsSchema = z.strictObject({
  path: filePath,
  secondPath: filePath.optional(),
  contract: z.enum([...MODEL_CONTRACTS, 'auto']).default('auto'),
  /** Adapter temperature of the static branch (single-classifier contract), T0 >= 1. */
  t0: z.number().min(1).max(1000).optional(),
  certaintyRule: z.enum(CERTAINTY_RULES).optional(),
  /** Explicit preprocessing; wins over the sidecar and the ONNX metadata. */
  input: InputSpecSchema.optional(),
  labels: z.array(z.string().min(1)).min(1).optional(),
  /** Providers to try, in order; absent: the platform's order (cuda if installed, webgpu, dml, coreml, cpu). */
  executionProviders: z.array(z.enum(EXECUTION_PROVIDERS)).min(1).optional(),
});
/** Adapter settings when neither the operator nor a sidecar gives them. */
export const DEFAULT_ADAPTER = { t0: 2, certaintyRule: 'entropy' } as const;

export type ModelOptionsInput = z.input<typeof ModelOptionsSchema>;
export type ModelOptions = z.output<typeof ModelOptionsSchema>;

/** The sidecar `<model>.knob.json`: preprocessing, labels and adapter defaults for a model file. */
export const ModelSidecarSchema = z.strictObject({
  input: InputSpecSchema.optional(),
  labels: z.array(z.string().min(1)).min(1).optional(),
  contract: z.enum(MODEL_CONTRACTS).optional(),
  t0: z.number().min(1).max(1000).optional(),
  certaintyRule: z.enum(CERTAINTY_RULES).optional(),
});
export type ModelSidecar = z.infer<typeof ModelSidecarSchema>;

export const ModelDescriptionSchema = z.strictObject({
  paths: z.array(z.string()).min(1).max(2),
  /** SHA-256 of each model file, in the order of paths (hex). */
  sha256: z
    .array(z.string().regex(/^[0-9a-f]{64}$/))
    .min(1)
    .max(2),
  contract: z.enum(MODEL_CONTRACTS),
  contractSource: z.enum(['detected', 'requested', 'sidecar']),
  classCount: z.number().int().positive(),
  labelNames: z.array(z.string()),
  labelsSource: z.enum([...INPUT_SPEC_SOURCES, 'generated']),
  input: InputSpecSchema,
  inputSource: z.enum(INPUT_SPEC_SOURCES),
  adapter: z.strictObject({ t0: z.number(), certaintyRule: z.enum(CERTAINTY_RULES) }).nullable(),
  executionProvider: z.enum(EXECUTION_PROVIDERS),
  /** Providers not used, each with one readable reason and the provider's full message (for the log). */
  skippedProviders: z.array(z.strictObject({ name: z.string(), reason: z.string(), detail: z.string() })),
  /**
   * Width of the model's optional `features` output (Knob-native contract: its penultimate layer,
   * for density- and proximity-aware calibration); null when it has none.
   */
  featureCount: z.number().int().positive().nullable(),
  /**
   * How many batches the inference process runs at once (one onnxruntime session each): what the
   * live path keeps in flight so that every core works (session-layout.ts).
   */
  concurrentRuns: z.number().int().positive(),
});
export type ModelDescription = z.infer<typeof ModelDescriptionSchema>;
