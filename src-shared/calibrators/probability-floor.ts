import { PROBABILITY_FLOOR } from './calibrator-descriptor';
import { calibratorDescriptor, type CalibrationMethod, type ExtensionMethod } from './calibrator-registry';
import type { AnyCalibratorSpec, Calibrator } from './output-calibrator';

/**
 * The floor under every calibrated probability, applied in the one place every calibrator's output
 * goes through (compileCalibrator, so calibrateLogits, the replay and the live path alike).
 *
 * Piecewise-constant maps (isotonic regression, histogram binning, scaling-binning) and saturated
 * sigmoids (Platt, beta) give a class exactly 0; one frame of that class then costs NLL 745 (the
 * log floor) and the mean NLL is dominated by it (isotonic and histogram binning gave 15.4 and
 * 20.3 on a held-out split). For these one-vs-rest methods each probability below the floor is
 * raised to it and the rest of the row scaled to keep the sum 1:
 *   q'_k = eps for q_k < eps,   q'_k = q_k (1 - m eps) / sum_{q_j >= eps} q_j otherwise,
 * with m the number raised (eps = 1e-6, and at most 1 / (2K) so the row can carry it): every
 * probability is at least eps, a frame's NLL at most -ln(1e-6) = 13.8, and a row with none below
 * the floor is unchanged bit for bit. The row methods (temperature, vector, matrix, Dirichlet,
 * PTS, DAC, ProCal) end in a softmax of finite values: their log-probabilities are finite already
 * and they are left as they are (floor 0).
 */
export { PROBABILITY_FLOOR };

/** The method's floor (its descriptor's, calibrator-registry.ts). */
export function probabilityFloorOf(method: CalibrationMethod | ExtensionMethod): number {
  return calibratorDescriptor(method).probabilityFloor;
}

/** The floor a row of k probabilities gets: at most 1 / (2k), so the row can carry it. */
export function rowProbabilityFloor(floor: number, k: number): number {
  return Math.min(floor, 1 / (2 * k));
}

/** Applies the floor to one row of log-probabilities `out[offset .. offset + k)` in place. */
export function floorLogProbabilitiesInto(out: Float64Array, offset: number, k: number, floor: number): void {
  const eps = rowProbabilityFloor(floor, k);
  const logEps = Math.log(eps);
  let raised = 0;
  let kept = 0;
  for (let c = 0; c < k; c++) {
    if (out[offset + c] < logEps) raised++;
    else kept += Math.exp(out[offset + c]);
  }
  if (raised === 0) return;
  const scale = Math.log(1 - raised * eps) - Math.log(kept);
  for (let c = 0; c < k; c++) out[offset + c] = out[offset + c] < logEps ? logEps : out[offset + c] + scale;
}

/** The calibrator with its method's floor applied after every row (itself when the floor is 0). */
export function withProbabilityFloor<S extends AnyCalibratorSpec>(calibrator: Calibrator<S>): Calibrator<S> {
  const floor = probabilityFloorOf(calibrator.spec.method);
  if (floor === 0) return calibrator;
  return {
    ...calibrator,
    rowInto(logits, offset, k, out, outOffset, scratch, features, featureOffset, condition) {
      calibrator.rowInto(logits, offset, k, out, outOffset, scratch, features, featureOffset, condition);
      floorLogProbabilitiesInto(out, outOffset, k, floor);
    },
  };
}
