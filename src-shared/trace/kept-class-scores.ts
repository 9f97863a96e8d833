import { clampGate } from '../fusion/convex-fusion';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { KeptClassFrameBounds } from '../metrics/kept-class-bounds';
import { allocateTopLabelScores, topLabelOnlyScores, type ClassScores, type TopLabelScores } from '../metrics/scores';
import type { KeptClassLogits } from './kept-classes';

/**
 * Rounding slack added to each bound in the log domain, relative to the logits' size: the full
 * replay sums its softmax in another order, and the rest summaries were rounded once.
 */
const ROUNDING_SLACK = 1e-12;

/**
 * The top-label pairs, NLL and Brier terms of the fused output at gate values `g` (by frame) from
 * kept-class logits, each frame with its bounds against the full trace (kept-classes.ts for the
 * rest summaries). With m the largest kept fused logit, Z_T = sum_{k in T} exp(z_k - m) and the
 * rest R(g) = sum_{k not in T} exp(z_k(g) - m) bracketed by
 *   R_lo = exp(max(L_s + g a_s, L_d - (1 - g) a_d) - m)  <=  R(g)  <=  R_hi = exp((1 - g) L_s + g L_d - m),
 * the estimate takes R = R_hi (exact at g = 0 and 1, where both brackets meet): Z = Z_T + R_hi,
 * confidence 1 / Z, NLL log Z + m - z_y, Brier sum_T p_k^2 + R_hi^2 / (r Z^2) - 2 p_y + 1 (the
 * rest as r equal classes). The full partition lies in [Z_T + R_lo, Z], so with
 * delta = log(Z / (Z_T + R_lo)) every kept probability lies in [p, p e^delta] and the NLL term in
 * [nll - delta, nll] (delta holds a rounding slack, as the confidence's range does below c); the
 * Brier bound adds up those ranges, and the rest's sum of squares is at most exp(M - m) / Z_T times
 * its mass, M = (1 - g) M_s + g M_d bounding every rest logit. The top-1
 * is the first largest kept logit, settled when it exceeds M.
 */
export function keptClassScoresOfFrames(
  kept: KeptClassLogits,
  classCount: number,
  g: Float64Array,
  frames: Int32Array,
  labels: Int32Array,
): { scores: ClassScores; top: TopLabelScores; bounds: KeptClassFrameBounds } {
  const n = frames.length;
  const keep = kept.keep;
  const restCount = classCount - keep;
  const logRestCount = Math.log(restCount);
  const sampleNll = new Float64Array(n);
  const sampleBrier = new Float64Array(n);
  const top = allocateTopLabelScores(n);
  const bounds: KeptClassFrameBounds = {
    confidenceUp: new Float64Array(n),
    confidenceDown: new Float64Array(n),
    nll: new Float64Array(n),
    brier: new Float64Array(n),
    uncertainTop1: new Uint8Array(n),
  };
  const frame = new KeptFrameFusion(keep);
  const z = frame.z;
  const { restLseStatic, restLseDyn, restSlopeStatic, restSlopeDyn, restMaxStatic, restMaxDyn } = kept;
  for (let j = 0; j < n; j++) {
    const i = frames[j]!;
    frame.fuse(kept, i, g[i]!);
    const { gate, stay, base, m, best, upperLog, shift, zT, sumSquares, runnerUp } = frame;
    const lowerLog = Math.max(restLseStatic[i]! + gate * restSlopeStatic[i]!, restLseDyn[i]! - stay * restSlopeDyn[i]!);
    const restMax = stay * restMaxStatic[i]! + gate * restMaxDyn[i]!;
    const slack = ROUNDING_SLACK * (1 + Math.abs(m) + Math.abs(upperLog));
    const rHi = expNonPositive(upperLog - shift);
    const rLo = Math.min(rHi, expNonPositive(lowerLog - shift));
    const partition = zT + rHi;
    // zT + rLo underflows to 0 only when the kept classes are negligible against a rest known only
    // to within its chord: delta is then Infinity, and each bound below is its quantity's range
    const delta = Math.log(partition) - Math.log(zT + rLo) + slack;
    const grow = Math.expm1(delta);
    const inverse = 1 / partition;
    const confidence = expNonPositive(m - shift) * inverse;
    const confidenceHi = zT + rLo > 0 ? Math.min(1, expNonPositive(m - shift) / (zT + rLo)) : 1;
    const predicted = kept.classes[base + best]!;
    const label = labels[j]!;
    const labelAt = keptIndexOf(kept.classes, base, keep, label);
    const restLeadRatio = zT > 0 ? Math.min(1, expNonPositive(restMax - shift) / zT) : 1;
    const fillProbability = expNonPositive(upperLog - logRestCount - shift) * inverse;
    const labelProbability = labelAt >= 0 ? expNonPositive(z[labelAt]! - shift) * inverse : fillProbability;
    const keptSquares = sumSquares * inverse * inverse;
    const restSquaresEstimate = restCount * fillProbability * fillProbability;
    const restSquaresFull = restLeadRatio * (zT > 0 ? Math.min(1, rHi / zT) : 1);
    top.confidence[j] = confidence;
    top.predicted[j] = predicted;
    top.correct[j] = predicted === label ? 1 : 0;
    sampleNll[j] = Math.log(partition) + shift - (labelAt >= 0 ? z[labelAt]! : upperLog - logRestCount);
    sampleBrier[j] = keptSquares + restSquaresEstimate - 2 * labelProbability + 1;
    bounds.confidenceUp[j] = confidenceHi - confidence + slack;
    bounds.confidenceDown[j] = confidence * slack;
    bounds.nll[j] = labelAt >= 0 ? delta : Infinity;
    const brierBound =
      (keptSquares > 0 ? Math.expm1(2 * delta) * keptSquares : 0) +
      (labelAt >= 0
        ? labelProbability > 0
          ? 2 * labelProbability * grow
          : 0
        : 2 * Math.max(labelProbability, restLeadRatio)) +
      Math.max(restSquaresEstimate, restSquaresFull) +
      slack;
    // a Brier term lies in [0, 2]
    bounds.brier[j] = Math.min(2, brierBound);
    // a rest class may reach the lead, or a kept runner-up's probability may round to the leader's
    // (more than 1e-12 relative below the lead, its exp and probability are strictly smaller)
    bounds.uncertainTop1[j] = restMax >= m - slack || m - runnerUp <= 1e-12 * (1 + Math.abs(m)) ? 1 : 0;
  }
  return { scores: topLabelOnlyScores(classCount, labels, sampleNll, sampleBrier), top, bounds };
}

/**
 * The kept-class estimates of top-1 and confidence alone (what keptClassScoresOfFrames gives, the
 * same bits) of frames [from, to) at gate values `g` (by frame), written at the same indices of
 * `top1` and `confidence`: the replay's outputs on a kept-class trace, with no allocation a call
 * beyond one row of kept logits.
 */
export function keptClassTopLabelInto(
  kept: KeptClassLogits,
  g: Float64Array,
  from: number,
  to: number,
  top1: Int32Array,
  confidence: Float64Array,
): void {
  const frame = new KeptFrameFusion(kept.keep);
  for (let i = from; i < to; i++) {
    frame.fuse(kept, i, g[i]!);
    const rHi = expNonPositive(frame.upperLog - frame.shift);
    confidence[i] = expNonPositive(frame.m - frame.shift) * (1 / (frame.zT + rHi));
    top1[i] = kept.classes[frame.base + frame.best]!;
  }
}

/**
 * One frame's kept fused logits at a gate value and what every kept-class figure starts from: the
 * largest kept logit m (the first, `best`), the rest's chord `upperLog`, the shift (the larger of the
 * two: no exp overflows however far apart they are, and the partition is at least 1) and the sums of
 * the kept exp(z - shift) and of their squares. One object a scoring pass, refilled per frame.
 */
class KeptFrameFusion {
  readonly z: Float64Array;
  gate = 0;
  stay = 1;
  base = 0;
  m = -Infinity;
  best = 0;
  upperLog = 0;
  shift = 0;
  zT = 0;
  sumSquares = 0;
  /** The largest kept logit below m (what says whether two kept classes tie). */
  runnerUp = -Infinity;

  constructor(private readonly keep: number) {
    this.z = new Float64Array(keep);
  }

  fuse(kept: KeptClassLogits, i: number, g: number): void {
    const { keep, z } = this;
    const gate = clampGate(g);
    const stay = 1 - gate;
    const base = i * keep;
    let m = -Infinity;
    let best = 0;
    for (let t = 0; t < keep; t++) {
      // the replay's arithmetic (fuseRowInto), so a kept logit has the full row's bits
      const v = stay * kept.zStatic[base + t]! + gate * kept.zDyn[base + t]!;
      z[t] = v;
      if (v > m) {
        m = v;
        best = t;
      }
    }
    const upperLog = stay * kept.restLseStatic[i]! + gate * kept.restLseDyn[i]!;
    // M <= L, so the rest's largest logit is below the shift too
    const shift = m > upperLog ? m : upperLog;
    let zT = 0;
    let sumSquares = 0;
    let runnerUp = -Infinity;
    for (let t = 0; t < keep; t++) {
      const e = expNonPositive(z[t]! - shift);
      zT += e;
      sumSquares += e * e;
      if (t !== best && z[t]! !== m && z[t]! > runnerUp) runnerUp = z[t]!;
    }
    this.gate = gate;
    this.stay = stay;
    this.base = base;
    this.m = m;
    this.best = best;
    this.upperLog = upperLog;
    this.shift = shift;
    this.zT = zT;
    this.sumSquares = sumSquares;
    this.runnerUp = runnerUp;
  }
}

/** Where `label` sits among a frame's kept classes (increasing), or -1. */
function keptIndexOf(classes: Uint16Array, base: number, keep: number, label: number): number {
  let lo = 0;
  let hi = keep - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = classes[base + mid]!;
    if (c === label) return mid;
    if (c < label) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
