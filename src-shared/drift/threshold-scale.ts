import { nextDown } from '../next-double';

/**
 * How the thresholds of a signal's detectors move together when they are calibrated jointly
 * (false-alarm-threshold.ts): one parameter q, and each detector's threshold a non-decreasing
 * function of it, so the group's mean run length only grows with q and one search over q finds the
 * thresholds. `inverse(v)` is the least q whose threshold is at least v: where a record of value v
 * stops counting as a passage (an alarm is a statistic above its threshold), so the group's mean run
 * length can change only at the inverses of the records.
 */
export interface ThresholdScale {
  at(q: number): number;
  inverse(value: number): number;
}

/** One detector alone: q is its threshold. */
export const IDENTITY_SCALE: ThresholdScale = { at: (q) => q, inverse: (value) => value };

/**
 * Equal chances of an alarm within a horizon: at q in [0, 1] the threshold is the q-quantile
 * (linear between order statistics) of the detector's largest value within the horizon over the
 * simulated paths, so every detector of the group passes its threshold within the horizon on about
 * the same share of paths. When the run lengths are about exponential that share fixes the mean run
 * length, so the detectors get about equal shares of the group's false alarms, as a union bound
 * would give them, without its slack. Outside [0, 1] the threshold goes on linearly, at the slope of
 * the whole range (or of |largest| when the maxima are all equal), so every target has a q.
 */
export function horizonMaximaScale(maxima: Float64Array): ThresholdScale {
  const sorted = Float64Array.from(maxima).sort();
  const m = sorted.length;
  if (m === 0) throw new RangeError('a threshold scale needs at least one maximum');
  const first = sorted[0]!;
  const last = sorted[m - 1]!;
  const slope = last > first ? last - first : Math.max(Math.abs(last), 1);
  const span = m > 1 ? 1 : 0;
  const scale: ThresholdScale = {
    at(q) {
      if (q <= 0 || m === 1) return first + slope * q;
      if (q >= span) return last + slope * (q - span);
      const x = q * (m - 1);
      const i = Math.floor(x);
      return sorted[i]! + (x - i) * (sorted[i + 1]! - sorted[i]!);
    },
    inverse(value) {
      // the least q whose threshold reaches +-Infinity is +-Infinity (the bracket below would not end)
      if (!Number.isFinite(value)) return value;
      // rounded, at(q) can fall an ulp short of the value at the q computed, or reach it a few ulps
      // below: the least double whose threshold reaches the value, so the group's mean run length
      // jumps exactly at the inverses of the records
      const rough = roughInverse(value);
      if (scale.at(rough) >= value && scale.at(nextDown(rough)) < value) return rough;
      // bracket it, at(lo) < value <= at(hi) (at() goes to -+Infinity outside [0, 1]), and halve
      let hi = rough;
      let step = Math.max(Math.abs(hi), 1) * Number.EPSILON;
      for (; scale.at(hi) < value; step *= 2) hi += step;
      let lo = hi;
      step = Math.max(Math.abs(hi), 1) * Number.EPSILON;
      do {
        lo -= step;
        step *= 2;
      } while (scale.at(lo) >= value);
      for (;;) {
        const mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi) return hi;
        if (scale.at(mid) >= value) hi = mid;
        else lo = mid;
      }
    },
  };
  function roughInverse(value: number): number {
    if (value <= first || m === 1) return (value - first) / slope;
    if (value > last) return span + (value - last) / slope;
    // sorted[i - 1] < value <= sorted[i]
    let lo = 1;
    let hi = m - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! >= value) hi = mid;
      else lo = mid + 1;
    }
    const below = sorted[lo - 1]!;
    return (lo - 1 + (value - below) / (sorted[lo]! - below)) / (m - 1);
  }
  return scale;
}
