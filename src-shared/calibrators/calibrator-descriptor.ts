import { z } from 'zod';
import type { CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import type { RowConditions, RowFeatures } from './fit-input';
import type { FitReport } from './fit-report';

/**
 * What one output calibrator is, in one place (calibrator-registry.ts lists them): its spec schema
 * (a zod object with a literal `method`, one option of CalibratorSpecSchema), its name in words,
 * its fit, its compiled row function, and what the app asks of a spec (classes, feature width).
 * Each descriptor is written `satisfies CalibratorDescriptor<typeof Schema>`, so a missing piece
 * does not compile; its ONNX nodes are the deploy layer's (src-main/core/deploy/calibrator-graph-registry.ts).
 */
export type SpecSchema = z.ZodObject<{ method: z.ZodLiteral<string> } & z.ZodRawShape>;
export type SpecOf<S extends SpecSchema> = z.infer<S>;

/** The probability floor of the one-vs-rest methods (probability-floor.ts). */
export const PROBABILITY_FLOOR = 1e-6;

/** The smallest log-probability written (a probability of 0 stays finite). */
export const LOG_FLOOR = -745;

/**
 * Calibrates `logits[offset .. offset + k)` to log-probabilities in `out[outOffset ..)`; `scratch`
 * holds at least k values. Feature methods read the row's features at `features[featureOffset ..)`.
 * A condition-aware calibrator applies `condition` (an index into its `condition.names`) where a
 * stream's hysteresis chose it (condition-hysteresis.ts), else the condition detected on the row.
 */
export type RowInto = (
  logits: LogitArray,
  offset: number,
  k: number,
  out: Float64Array,
  outOffset: number,
  scratch: Float64Array,
  features?: Float32Array,
  featureOffset?: number,
  condition?: number,
) => void;

/** How a condition-aware calibrator (conditional-calibration.ts) chooses a row's condition. */
export interface ConditionChoice {
  names: readonly string[];
  /** Frames another condition must be detected on in a row before a stream applies it (condition-hysteresis.ts). */
  hysteresisFrames: number;
  /** The condition detected from the row's features alone (an index into `names`). */
  detect(features: Float32Array, featureOffset: number): number;
}

/** A spec compiled: its row function (allocating nothing) and the feature width each row needs. */
export interface CompiledRows {
  featureWidth: number | null;
  rowInto: RowInto;
  /** A calibrator that switches by condition (conditional-calibration.ts): how. Absent for the others. */
  condition?: ConditionChoice;
}

// Members are methods (bivariant in their parameters), so any descriptor is a CalibratorDescriptor.
export interface CalibratorDescriptor<S extends SpecSchema = SpecSchema> {
  method: SpecOf<S>['method'];
  schema: S;
  /** The method in words (the desk's list, the comparison table, error messages). */
  label: string;
  /** The spec in words with its parameters when they are few (the views' label); the label if absent. */
  describe?(spec: SpecOf<S>): string;
  /** Whether it reads the model's `features` output of each frame besides its logits. */
  needsFeatures: boolean;
  /** Whether its fit reads the condition each frame was recorded under (RowConditions); false if absent. */
  needsConditions?: boolean;
  /** The floor under each calibrated probability (probability-floor.ts), 0 for none. */
  probabilityFloor: number;
  /** Whether the desk's comparison ticks it at first. */
  comparedByDefault: boolean;
  /** How many classes a spec maps (null for any). */
  classCount(spec: SpecOf<S>): number | null;
  /** The feature width a spec was fitted with (null for methods that read no features). */
  featureWidth(spec: SpecOf<S>): number | null;
  /** Refuses a spec whose shape does not fit `classCount` beyond its class count (checkCalibratorFor). */
  checkFor?(spec: SpecOf<S>, classCount: number): void;
  /**
   * Fits on checked input (fitCalibrator checks it; `features` is given when `needsFeatures`).
   * `signal`: a fit that takes seconds (an optimiser's iterations) reads it and stops when cancelled.
   * `conditions` is given when `needsConditions`.
   */
  fit(
    logits: LogitArray,
    labels: Int32Array,
    classCount: number,
    features: RowFeatures | null,
    signal?: CancelSignal,
    conditions?: RowConditions | null,
  ): { spec: SpecOf<S>; report: FitReport };
  /** The row function, before the probability floor (compileCalibrator adds it). */
  compile(spec: SpecOf<S>): CompiledRows;
}

/** Finite numbers (at most a million), the arrays of every spec. */
export const finiteNumbers = z.array(z.number().refine(Number.isFinite, 'not a finite number')).max(1_000_000);

/** The refusal of a feature method applied without features. */
export function missingFeatures(label: string): never {
  throw new KnobError(
    'INVALID_INPUT',
    `${label} needs the model's features for every frame: record with --record-features`,
  );
}

/** Maps a row of logits (or of ln p) into `scratch`, before the final softmax. */
export type LogitMap = (
  logits: LogitArray,
  offset: number,
  k: number,
  scratch: Float64Array,
  features: Float32Array | undefined,
  featureOffset: number,
  condition: number | undefined,
) => void;

/** A row method: its map of the row, then a softmax (log-probabilities, finite: no floor). */
export function logitMapRows(featureWidth: number | null, onLogits: LogitMap): CompiledRows {
  return {
    featureWidth,
    rowInto(logits, offset, k, out, outOffset, scratch, features, featureOffset = 0, condition) {
      onLogits(logits, offset, k, scratch, features, featureOffset, condition);
      const lse = logSumExpRow(scratch, 0, k);
      for (let c = 0; c < k; c++) out[outOffset + c] = scratch[c] - lse;
    },
  };
}

/** Each row divided by its temperature (temperature, PTS, DAC). */
export function dividedRowInto(logits: LogitArray, offset: number, k: number, scratch: Float64Array, t: number): void {
  for (let c = 0; c < k; c++) scratch[c] = logits[offset + c] / t;
}
