import { KnobError } from '../errors';
import type { LogitArray } from '../fusion/logits';

/**
 * What the output calibrators (output-calibrator.ts) check of the rows they are fitted on or
 * applied to.
 */

/** The model's features of the rows a calibrator is fitted on or applied to (n x width). */
export interface RowFeatures {
  width: number;
  values: Float32Array;
}

/**
 * What every fit needs of its input, checked once before any method sees it: K >= 2 classes, K
 * finite logits and one label in 0..K-1 per row, and the features (when given) finite, a whole
 * number of them per row. A fit never runs on input that would make its parameters NaN.
 */
export function checkFitInput(logits: LogitArray, labels: Int32Array, k: number, features: RowFeatures | null): void {
  const fail = (message: string): never => {
    throw new KnobError('INVALID_INPUT', message);
  };
  const n = labels.length;
  if (!Number.isInteger(k) || k < 2) fail(`calibrators need at least two classes, got ${k}`);
  if (logits.length !== n * k) fail(`${logits.length} logits do not make ${n} rows of ${k}`);
  for (let i = 0; i < n; i++)
    if (!(Number.isInteger(labels[i]) && labels[i] >= 0 && labels[i] < k))
      fail(`label ${labels[i]} of row ${i} is outside 0..${k - 1}`);
  for (let i = 0; i < logits.length; i++)
    if (!Number.isFinite(logits[i])) fail(`logit ${i % k} of row ${Math.floor(i / k)} is not finite (${logits[i]})`);
  if (features !== null) checkRowFeatures(features, n);
}

/** Features of `rows` rows: a positive whole width, that many finite values a row. */
export function checkRowFeatures(features: RowFeatures, rows: number): void {
  const { width, values } = features;
  if (!Number.isInteger(width) || width < 1)
    throw new KnobError('INVALID_INPUT', `features need a positive whole width, got ${width}`);
  if (values.length < rows * width)
    throw new KnobError('INVALID_INPUT', `${values.length} feature values do not make ${rows} rows of ${width}`);
  for (let i = 0; i < rows * width; i++)
    if (!Number.isFinite(values[i]))
      throw new KnobError('INVALID_INPUT', `feature ${i % width} of row ${Math.floor(i / width)} is not finite`);
}

/**
 * The condition each row was taken under (a corruption, a camera, a time-of-day segment: a
 * metadata column of the recording), for the condition-aware calibrator: `codes[i]` indexes
 * `names`, -1 where the row's condition is unknown.
 */
export interface RowConditions {
  names: string[];
  codes: Int32Array;
  /** The hysteresis the fitted calibrator applies over a stream (condition-hysteresis.ts); its default otherwise. */
  hysteresisFrames?: number;
}
