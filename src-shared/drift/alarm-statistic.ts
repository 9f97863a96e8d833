/**
 * A drift detector as the threshold calibration and the monitor see it: one value a frame, in, and
 * the detector's statistic out (NO_TEST on frames where it does not test, as a windowed test between
 * its strides); an alarm is a statistic above the threshold, after which the detector restarts
 * (reset), so the times between alarms on unshifted data are independent draws of the run length.
 * A value goes in encoded (a bin, a standardised value): the calibration reads most codes from a
 * table of the reference's values (codeTable) and simulates millions of frames from them.
 */
export interface AlarmStatistic {
  encode(x: number): number;
  /**
   * encode(values[i]) at [i] for every i, in the smallest array that holds the codes exactly, or
   * null where encoding a frame as it comes costs less than looking it up. A threshold calibration
   * makes one a simulated path (its stream is made of the reference's values), and reads it at a
   * random index every frame: 30 paths' tables of doubles for two detectors (9.6 MB on an hour's
   * reference) left the cache, at 12-13 ns a frame; a windowed KS's bins fit bytes, and a CUSUM
   * encodes with a subtraction and a division. Built in a loop of each class's own (one loop
   * calling encode saw both classes, and a thread's cold start spent tens of milliseconds there).
   */
  codeTable(values: Float64Array): ArrayLike<number> | null;
  /** The statistic after one more frame, given as encode(x). */
  nextEncoded(encoded: number): number;
  reset(): void;
}

export const NO_TEST = -1;
