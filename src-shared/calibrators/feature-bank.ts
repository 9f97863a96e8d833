import { z } from 'zod';
import { KnobError } from '../errors';
import type { LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';

/**
 * The reference set of density- and proximity-aware calibration: feature vectors of the fitting
 * frames, L2-normalised (so distances compare directions, as nearest-neighbour scores in feature
 * space usually do: Sun et al. 2022), at most MAX_BANK_ROWS of them (an even, seeded-free stride
 * through the fitting frames), stored in the calibrator's JSON as little-endian float32 in base64
 * (a 1,000 x 192 bank is 1 MB of text instead of 4 MB of decimal numbers).
 */
export const MAX_BANK_ROWS = 1000;

// Both runtimes this layer runs in (Node >= 16, browsers) have these globals; the shared layer's
// compiler settings include neither DOM nor Node types.
const { btoa, atob } = globalThis as unknown as { btoa(binary: string): string; atob(base64: string): string };

export const FeatureBankSchema = z
  .strictObject({
    width: z.number().int().min(1).max(65_536),
    rows: z.number().int().min(1).max(MAX_BANK_ROWS),
    /** rows x width float32, little-endian, base64 */
    float32Base64: z.string().max(16_000_000),
  })
  // decoded when the spec is read (a settings file), so a bad bank is refused there, by field
  .superRefine((spec, context) => {
    try {
      featureBankOf(spec);
    } catch (error) {
      context.addIssue({ code: 'custom', path: ['float32Base64'], message: (error as Error).message });
    }
  });
export interface FeatureBankSpec {
  width: number;
  rows: number;
  float32Base64: string;
}

export interface FeatureBank {
  width: number;
  rows: number;
  values: Float32Array;
  /** For each bank row, the fitting frame it came from (to leave a frame out of its own neighbours). */
  sourceRows: Int32Array | null;
}

/** Normalises `width` values of `source` from `offset` into `out` (zero vectors stay zero). */
export function normalisedInto(source: ArrayLike<number>, offset: number, width: number, out: Float32Array): void {
  let norm = 0;
  for (let j = 0; j < width; j++) norm += source[offset + j] * source[offset + j];
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let j = 0; j < width; j++) out[j] = source[offset + j] * scale;
}

export function buildFeatureBank(features: Float32Array, width: number, frameCount: number): FeatureBank {
  const rows = Math.min(MAX_BANK_ROWS, frameCount);
  if (rows < 1) throw new KnobError('INVALID_INPUT', 'a feature bank needs at least one frame');
  const values = new Float32Array(rows * width);
  const sourceRows = new Int32Array(rows);
  const row = new Float32Array(width);
  for (let r = 0; r < rows; r++) {
    const source = Math.floor((r * frameCount) / rows);
    sourceRows[r] = source;
    normalisedInto(features, source * width, width, row);
    values.set(row, r * width);
  }
  return { width, rows, values, sourceRows };
}

export function featureBankSpec(bank: FeatureBank): FeatureBankSpec {
  const bytes = new Uint8Array(bank.values.buffer, bank.values.byteOffset, bank.values.byteLength);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { width: bank.width, rows: bank.rows, float32Base64: btoa(binary) };
}

export function featureBankOf(spec: FeatureBankSpec): FeatureBank {
  let binary: string;
  try {
    binary = atob(spec.float32Base64);
  } catch {
    throw new KnobError('INVALID_SETTINGS', 'the feature bank is not valid base64');
  }
  if (binary.length !== spec.rows * spec.width * 4)
    throw new KnobError(
      'INVALID_SETTINGS',
      `the feature bank holds ${binary.length} bytes, not ${spec.rows} x ${spec.width} float32 values`,
    );
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const values = new Float32Array(bytes.buffer);
  for (let i = 0; i < values.length; i++)
    if (!Number.isFinite(values[i]))
      throw new KnobError('INVALID_SETTINGS', 'the feature bank holds a non-finite value');
  return { width: spec.width, rows: spec.rows, values, sourceRows: null };
}

/**
 * Mean Euclidean distance from the normalised `query` to its `k` nearest bank rows, leaving out
 * the bank row that is frame `self` (a fitting frame is not its own neighbour; -1 for none).
 * Exact, by brute force: k <= 64, so a sorted insertion list holds the nearest. `nearest` holds k.
 */
export function meanNeighbourDistance(
  bank: FeatureBank,
  query: Float32Array,
  k: number,
  self: number,
  nearest: Float64Array,
): number {
  const { width, rows, values, sourceRows } = bank;
  let filled = 0;
  for (let r = 0; r < rows; r++) {
    if (sourceRows !== null && sourceRows[r] === self) continue;
    let squared = 0;
    const at = r * width;
    for (let j = 0; j < width; j++) {
      const d = values[at + j] - query[j];
      squared += d * d;
    }
    if (filled === k && squared >= nearest[k - 1]) continue;
    let i = filled < k ? filled++ : k - 1;
    while (i > 0 && nearest[i - 1] > squared) {
      nearest[i] = nearest[i - 1];
      i--;
    }
    nearest[i] = squared;
  }
  let sum = 0;
  for (let i = 0; i < filled; i++) sum += Math.sqrt(nearest[i]);
  return filled === 0 ? 0 : sum / filled;
}

/** The neighbour distance of every frame of `features` (n x width) against the bank. */
export function neighbourDistances(
  bank: FeatureBank,
  features: Float32Array,
  frameCount: number,
  k: number,
  leaveSelfOut: boolean,
): Float64Array {
  if (features.length < frameCount * bank.width)
    throw new KnobError('INVALID_INPUT', `features hold ${features.length} values, not ${frameCount} x ${bank.width}`);
  const out = new Float64Array(frameCount);
  const query = new Float32Array(bank.width);
  const nearest = new Float64Array(k);
  for (let i = 0; i < frameCount; i++) {
    normalisedInto(features, i * bank.width, bank.width, query);
    out[i] = meanNeighbourDistance(bank, query, k, leaveSelfOut ? i : -1, nearest);
  }
  return out;
}

/**
 * How a feature calibrator (DAC, ProCal) is fitted: the fitting frames' logits (row-major, K a
 * row), labels and features (row-major, `width` values a frame), to its parameters and report.
 */
export type FeatureCalibratorFit<Params> = (
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  features: Float32Array,
  width: number,
) => { params: Params; report: FitReport };

/**
 * The fitting side of a feature calibrator: the bank of the fitting frames and each fitting
 * frame's mean distance to its `k` nearest other frames of it.
 */
export function fittingNeighbourDistances(
  features: Float32Array,
  width: number,
  frameCount: number,
  k: number,
): { bank: FeatureBank; distances: Float64Array } {
  const bank = buildFeatureBank(features, width, frameCount);
  return { bank, distances: neighbourDistances(bank, features, frameCount, k, true) };
}

/** The applying side: a decoded bank and a function giving a row's mean distance to its k nearest. */
export function compileNeighbourDistance(
  spec: FeatureBankSpec,
  k: number,
): { bank: FeatureBank; distanceOf(features: ArrayLike<number>, offset: number): number } {
  const bank = featureBankOf(spec);
  const query = new Float32Array(bank.width);
  const nearest = new Float64Array(k);
  return {
    bank,
    distanceOf(features, offset) {
      normalisedInto(features, offset, bank.width, query);
      return meanNeighbourDistance(bank, query, k, -1, nearest);
    },
  };
}
