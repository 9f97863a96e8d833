import { checkFeaturesFor, type Calibrator } from '../calibrators/output-calibrator';
import { fuseRowInto } from '../fusion/convex-fusion';
import { softmaxRowInto } from '../fusion/logits';
import { UNKNOWN_LABEL, type Trace } from './trace';
import { SlidingWindowCalibration } from '../metrics/streaming';

/**
 * One labelled frame into a rolling window, as the live stream's readout and its replay both add
 * it: the frame's logits fused at `g`, calibrated when a calibrator is given (its calibrated
 * log-probabilities, whose softmax is the calibrated probabilities), then softmax. `fused` and
 * `probabilities` are K-value scratch rows; `probabilities` is also the calibrator's scratch.
 * `condition`: the condition a condition-aware calibrator applies to the frame (appliedConditions).
 */
export function pushFrameToWindow(
  window: SlidingWindowCalibration,
  trace: Trace,
  frame: number,
  g: number,
  label: number,
  calibrator: Calibrator | null,
  fused: Float64Array,
  probabilities: Float64Array,
  condition?: number,
): void {
  const k = trace.classCount;
  fuseRowInto(trace.zStatic, trace.zDyn, frame * k, k, g, fused, 0);
  if (calibrator !== null) {
    const features = trace.features;
    const offset = frame * (features?.width ?? 0);
    calibrator.rowInto(fused, 0, k, fused, 0, probabilities, features?.values, offset, condition);
  }
  softmaxRowInto(fused, 0, k, probabilities, 0);
  window.push(probabilities, 0, label);
}

/**
 * The rolling figures over a recording as the live stream showed them, but at gate values `g` (a
 * replay at other knobs): after each frame, the exact top-1 accuracy and mean top-label confidence
 * of the output (fused at g, then calibrated when a calibrator is given) over the last
 * `windowFrames` labelled frames, read at the ascending frame indices `at` (the chart's decimated
 * frames). Null where no labelled frame precedes the index. The same window (SlidingWindowCalibration)
 * and figures (accuracyAndConfidence) as the live stream's rolling readout. A kept-class trace has
 * no probability rows to push: null everywhere (its calibration view states its estimates' bounds,
 * which a rolling line could not show). A condition-aware calibrator applies `conditions`, each
 * frame's as the replay applies it (appliedConditions; null for any other calibrator).
 */
export function rollingSeries(
  trace: Trace,
  g: ArrayLike<number>,
  calibrator: Calibrator | null,
  windowFrames: number,
  at: readonly number[],
  conditions: ArrayLike<number> | null,
): { accuracy: (number | null)[]; confidence: (number | null)[] } {
  const k = trace.classCount;
  const labels = trace.labels;
  const window = new SlidingWindowCalibration(windowFrames, { classCount: k });
  const fused = new Float64Array(k);
  const probabilities = new Float64Array(k);
  if (calibrator !== null) checkFeaturesFor(calibrator, trace.features ?? null);
  const accuracy: (number | null)[] = [];
  const confidence: (number | null)[] = [];
  const frames = trace.keptClasses === undefined ? Math.min(trace.frameCount, g.length) : 0;
  let next = 0;
  for (let frame = 0; frame < frames && next < at.length; frame++) {
    const label = labels?.[frame] ?? UNKNOWN_LABEL;
    if (label !== UNKNOWN_LABEL)
      pushFrameToWindow(window, trace, frame, g[frame], label, calibrator, fused, probabilities, conditions?.[frame]);
    for (; next < at.length && at[next] === frame; next++) {
      const figures = window.accumulator.accuracyAndConfidence('rolling');
      accuracy.push(figures.find((m) => m.name === 'accuracy')?.value ?? null);
      confidence.push(figures.find((m) => m.name === 'mean confidence')?.value ?? null);
    }
  }
  for (; trace.keptClasses !== undefined && next < at.length; next++) {
    accuracy.push(null);
    confidence.push(null);
  }
  if (next < at.length)
    throw new RangeError(`rolling series: frame indices must ascend within the ${frames} frames (${at[next]})`);
  return { accuracy, confidence };
}
