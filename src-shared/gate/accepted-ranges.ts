import { z } from 'zod';

/**
 * What the app accepts for every knob and every frame interval, one table for every way a value
 * enters (API, settings file, bundle manifest, trace metadata, recent runs, CLI options). Each range
 * is what the physics and the desk mean, and each bound keeps every computation on it finite and
 * bounded (tests/unit/accepted-ranges.test.ts sweeps them):
 *
 * - zeta in [1e-3, 100]: below 1e-3 the gate rings for more than 1,000 periods before it settles
 *   (settling ~ 4 / (zeta wn)), which no operator means; the settling search counts half-periods and
 *   at zeta ~ 1e-16 their number is no longer representable (issue 26's hang). Above 100 the slow
 *   pole wn / (2 zeta) makes the gate a pure delay line.
 * - wn in [1e-3, 1000] rad/s: the desk's dial spans 0.1 to 100; 1e-3 rad/s settles in about an hour
 *   and a half at zeta 1, and 1000 rad/s is past Nyquist of every accepted frame rate below 318 Hz
 *   (ZOH is exact there: the gate then follows u* within a frame).
 * - tau (reset horizon) in [1e-3, 3600] s.
 * - frame rate in [0.01, 1000] Hz, so a nominal frame interval dt in [1 ms, 100 s]: a camera or a
 *   video's declared rate; 1 / rate is finite and far from subnormal at both ends. Gaps between
 *   recorded frames may be longer (a paused camera); they enter only through exp(-sigma dt).
 */
export interface AcceptedRange {
  readonly min: number;
  readonly max: number;
  /** The unit after a value, for messages ('' for none). */
  readonly unit: string;
}

export const ZETA_RANGE: AcceptedRange = Object.freeze({ min: 1e-3, max: 100, unit: '' });
export const WN_RANGE_RAD_PER_SEC: AcceptedRange = Object.freeze({ min: 1e-3, max: 1000, unit: 'rad/s' });
export const TAU_RANGE_SECONDS: AcceptedRange = Object.freeze({ min: 1e-3, max: 3600, unit: 's' });
export const FRAME_RATE_RANGE_HZ: AcceptedRange = Object.freeze({ min: 0.01, max: 1000, unit: 'Hz' });
/**
 * An output temperature (temperature scaling, the tuner's temperatures): logits divided by T in
 * [1e-3, 1e3]. 5e-324 once made every logit infinite; past 1e3 the softmax is uniform to float32.
 */
export const TEMPERATURE_RANGE: AcceptedRange = Object.freeze({ min: 1e-3, max: 1e3, unit: '' });
export const FRAME_INTERVAL_RANGE_SECONDS: AcceptedRange = Object.freeze({
  min: 1 / FRAME_RATE_RANGE_HZ.max,
  max: 1 / FRAME_RATE_RANGE_HZ.min,
  unit: 's',
});

/** `[0.001, 100]` or `[0.001, 1000] rad/s`: how a range reads in every message. */
export function describeRange(range: AcceptedRange): string {
  return `[${range.min}, ${range.max}]${range.unit === '' ? '' : ` ${range.unit}`}`;
}

/** The message of a value outside `range`, naming the field. */
export function outOfRangeMessage(field: string, range: AcceptedRange): string {
  return `${field} must lie in ${describeRange(range)}`;
}

export function isInRange(value: number, range: AcceptedRange): boolean {
  return value >= range.min && value <= range.max;
}

/** A zod number within `range` whose error names the field and the range. */
export function numberInAcceptedRange(field: string, range: AcceptedRange) {
  const message = outOfRangeMessage(field, range);
  return z.number({ error: message }).min(range.min, { error: message }).max(range.max, { error: message });
}

/** A frame rate as every schema that takes one accepts it. */
export const FrameRateHzSchema = numberInAcceptedRange('frame rate', FRAME_RATE_RANGE_HZ);
