import type { Calibrator } from '../calibrators/output-calibrator';
import { fuseRowInto } from '../fusion/convex-fusion';
import { argmaxRow, marginRow, softmaxRowInto, type LogitArray } from '../fusion/logits';
import { confidenceShrinkageRatio, effectiveTemperature } from '../fusion/temperature';

/**
 * What the live view shows for one frame: the top-k classes by fused probability (calibrated when a
 * calibrator is given) with the fused, static and dynamic softmax probabilities of each, T_eff and CSR (ARCHITECTURE.md definitions),
 * and whether the two branches disagree on the top class. Computed only for frames the UI is sent
 * (at most ~30 per second), so the small result object is not a per-frame allocation.
 */
export interface ClassReadout {
  classIndex: number;
  fused: number;
  static: number;
  dynamic: number;
}

export interface FrameReadout {
  top: ClassReadout[];
  effectiveTemperature: number;
  confidenceShrinkageRatio: number;
  branchesDisagree: boolean;
  /** The condition a condition-aware calibrator applied to the frame (appliedConditions). */
  calibratorCondition?: string;
}

export function frameReadout(
  zStatic: LogitArray,
  zDyn: LogitArray,
  offset: number,
  classCount: number,
  g: number,
  topK: number,
  calibrator: Calibrator | null = null,
  /** The frame's features, for calibrators that read them (dac, procal). */
  features: { values: Float32Array; offset: number } | null = null,
  /**
   * The condition a condition-aware calibrator applies to the frame in its stream (the replay's,
   * through the hysteresis: appliedConditions); absent, the one detected on the frame alone.
   */
  condition?: number,
): FrameReadout {
  const fusedLogits = new Float64Array(classCount);
  fuseRowInto(zStatic, zDyn, offset, classCount, g, fusedLogits, 0);
  const fused = new Float64Array(classCount);
  const staticP = new Float64Array(classCount);
  const dynamicP = new Float64Array(classCount);
  const choice = calibrator?.condition;
  const applied =
    choice === undefined || features === null
      ? undefined
      : (condition ?? choice.detect(features.values, features.offset));
  if (calibrator === null) softmaxRowInto(fusedLogits, 0, classCount, fused, 0);
  else {
    // The output's probabilities are the calibrated ones; T_eff and CSR stay the fusion's own.
    calibrator.rowInto(
      fusedLogits,
      0,
      classCount,
      fused,
      0,
      new Float64Array(classCount),
      features?.values,
      features?.offset,
      applied,
    );
    for (let c = 0; c < classCount; c++) fused[c] = Math.exp(fused[c]);
  }
  softmaxRowInto(zStatic, offset, classCount, staticP, 0);
  softmaxRowInto(zDyn, offset, classCount, dynamicP, 0);
  const order = Array.from({ length: classCount }, (_, k) => k).sort((a, b) => fused[b] - fused[a] || a - b);
  const ms = marginRow(zStatic, offset, classCount);
  const md = marginRow(zDyn, offset, classCount);
  const mf = marginRow(fusedLogits, 0, classCount);
  return {
    top: order
      .slice(0, Math.max(1, Math.min(topK, classCount)))
      .map((k) => ({ classIndex: k, fused: fused[k], static: staticP[k], dynamic: dynamicP[k] })),
    effectiveTemperature: effectiveTemperature(ms, md, mf),
    confidenceShrinkageRatio: confidenceShrinkageRatio(ms, md, mf),
    branchesDisagree: argmaxRow(zStatic, offset, classCount) !== argmaxRow(zDyn, offset, classCount),
    ...(applied === undefined ? {} : { calibratorCondition: choice!.names[applied] }),
  };
}
