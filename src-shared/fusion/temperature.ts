import { fuseRowInto } from './convex-fusion';
import { marginRow, type LogitArray } from './logits';

/**
 * Effective temperature and confidence shrinkage of the fusion (ARCHITECTURE.md):
 *   T_eff = max(m_static, m_dyn) / m_fuse,   CSR = s(m_fuse) / s(max(m_static, m_dyn)),
 * with m = top-1 minus top-2 logit and s the logistic function.
 *
 * Limits, documented and tested:
 * - m_fuse = 0 with a positive branch margin gives T_eff = +Infinity; all three margins 0 gives
 *   T_eff = 1 (nothing was shrunk).
 * - T_eff >= 1 and CSR <= 1 hold for two classes; for any K when both branches rank the same two
 *   classes on top; and for any K when either branch's runner-ups are all equal (then the fused
 *   margin against the other branch's top class, or its runner-up, is at most a convex combination of
 *   the two margins; `train_knob.py` trains the shipped model's dynamic branch in this form).
 *   Otherwise, for K >= 3 with different runner-up classes, the fused margin can exceed both branch
 *   margins (e.g. z_static = (2, 1, 0), z_dyn = (2, 0, 1.9), g = 0.5 gives m = (1, 0.1) -> 1.05), so
 *   T_eff < 1 is a real reading, not an error.
 */
export function effectiveTemperature(marginStatic: number, marginDyn: number, marginFused: number): number {
  const branch = marginStatic > marginDyn ? marginStatic : marginDyn;
  if (marginFused === 0) return branch === 0 ? 1 : Infinity;
  return branch / marginFused;
}

function logistic(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

export function confidenceShrinkageRatio(marginStatic: number, marginDyn: number, marginFused: number): number {
  const branch = marginStatic > marginDyn ? marginStatic : marginDyn;
  return logistic(marginFused) / logistic(branch);
}

/**
 * Batched T_eff and CSR for frames [from, to). `scratch` must hold K values; nothing else allocates.
 */
export function fusionDiagnosticsInto(
  zStatic: LogitArray,
  zDyn: LogitArray,
  g: Float64Array,
  classCount: number,
  from: number,
  to: number,
  outTeff: Float64Array,
  outCsr: Float64Array,
  scratch: Float64Array,
): void {
  for (let i = from; i < to; i++) {
    const offset = i * classCount;
    fuseRowInto(zStatic, zDyn, offset, classCount, g[i], scratch, 0);
    const ms = marginRow(zStatic, offset, classCount);
    const md = marginRow(zDyn, offset, classCount);
    const mf = marginRow(scratch, 0, classCount);
    outTeff[i] = effectiveTemperature(ms, md, mf);
    outCsr[i] = confidenceShrinkageRatio(ms, md, mf);
  }
}
