/**
 * A drift detector as the threshold calibration and the monitor see it: one value a frame, in, and
 * the detector's statistic out (NO_TEST on frames where it does not test, as a windowed test between
 * its strides); an alarm is a statistic above the threshold, after which the detector restarts
 * (reset), so the times between alarms on unshifted data are independent draws of the run length.
 * A value goes in encoded (a bin, a standardised value): the calibration encodes each reference
 * frame once and simulates millions of frames from the codes.
 */
export interface AlarmStatistic {
  encode(x: number): number;
  /**
   * encode(values[i]) into out[i] for every i: the calibration encodes a reference's values once a
   * simulated path, in a loop of each class's own (one loop calling encode saw both classes, and
   * its thread's cold start spent tens of milliseconds there).
   */
  encodeInto(values: Float64Array, out: Float64Array): void;
  /** The statistic after one more frame, given as encode(x). */
  nextEncoded(encoded: number): number;
  reset(): void;
}

export const NO_TEST = -1;
