import {
  compareCalibrators,
  type CalibrationMethod,
  type CalibratorComparison,
  type HeldOutSplit,
} from '../../../src-shared/calibrators';
import type { RowConditions, RowFeatures } from '../../../src-shared/calibrators/fit-input';
import type { LogitArray } from '../../../src-shared/fusion/logits';
import type { CancelSignal } from '../../../src-shared/cancel-signal';

/**
 * Some methods of a calibrator comparison, as the metric suite's helper thread is asked to fit and
 * evaluate them (copied to it: a recording-sized comparison's logits are a megabyte or so). Every
 * method of a comparison is evaluated on the same held-out frames and resamples, so methods fitted
 * on two threads give what one thread gives.
 */
export interface CalibratorsRequest {
  logits: LogitArray;
  labels: Int32Array;
  classCount: number;
  methods: CalibrationMethod[];
  split: HeldOutSplit;
  features: RowFeatures | null;
  conditions: RowConditions | null;
}

/** The methods asked for, fitted and evaluated (the uncalibrated output is the caller's); `signal` stops it within a step. */
export function compareRequested(request: CalibratorsRequest, signal?: CancelSignal): CalibratorComparison {
  const { logits, labels, classCount, methods, split, features, conditions } = request;
  return compareCalibrators(logits, labels, classCount, methods, split, {
    features,
    conditions,
    signal,
    evaluateUncalibrated: false,
  });
}
