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
  /** The statistic after one more frame, given as encode(x). */
  nextEncoded(encoded: number): number;
  reset(): void;
}

export const NO_TEST = -1;
