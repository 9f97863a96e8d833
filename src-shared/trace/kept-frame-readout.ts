import { fuseRowInto } from '../fusion/convex-fusion';
import { argmaxRow, marginRow, softmaxRowInto } from '../fusion/logits';
import { confidenceShrinkageRatio, effectiveTemperature } from '../fusion/temperature';
import { keptClassesText } from '../metrics/kept-class-bounds';
import type { FrameReadout } from './frame-readout';
import type { KeptClassLogits } from './kept-classes';

/**
 * What the live view shows for one frame of a kept-class trace (kept-classes.ts), from its kept
 * classes and the rest's summaries, the same quantities as frameReadout:
 *  - each branch's probabilities of the kept classes exactly: the rest's log-sum-exp L_b is one
 *    more term of the branch's softmax;
 *  - the fused probabilities with the rest at its chord (1 - g) L_s + g L_d, as every figure of a
 *    kept-class trace is estimated (exact at g = 0 and 1; kept-class-scores.ts bounds the rest);
 *  - the margins of T_eff and CSR with the rest's largest logit M_b (a branch's is exact when its
 *    top class is kept: its runner-up is then the larger of the next kept logit and M_b; for the
 *    fused output (1 - g) M_s + g M_d, an upper bound on the rest's largest fused logit);
 *  - whether the branches' top classes differ, exact when at least one of them is kept (a rest
 *    class is never a kept one); when both lead from the rest it cannot be told, and reads false.
 * The top classes listed are kept ones only. `approximation` says all this where it is shown.
 */
export interface KeptFrameReadout extends FrameReadout {
  approximation: string;
}

export function keptFrameReadout(
  kept: KeptClassLogits,
  classCount: number,
  frame: number,
  g: number,
  topK: number,
): KeptFrameReadout {
  const m = kept.keep;
  const at = frame * m;
  // rows of the kept classes and one entry for the rest: its log-sum-exp, then its largest logit
  const row = (values: Float32Array, rest: number): Float64Array => {
    const out = new Float64Array(m + 1);
    for (let j = 0; j < m; j++) out[j] = values[at + j]!;
    out[m] = rest;
    return out;
  };
  const staticSum = row(kept.zStatic, kept.restLseStatic[frame]!);
  const dynSum = row(kept.zDyn, kept.restLseDyn[frame]!);
  const staticMax = row(kept.zStatic, kept.restMaxStatic[frame]!);
  const dynMax = row(kept.zDyn, kept.restMaxDyn[frame]!);
  const fusedSum = new Float64Array(m + 1);
  const fusedMax = new Float64Array(m + 1);
  fuseRowInto(staticSum, dynSum, 0, m + 1, g, fusedSum, 0);
  fuseRowInto(staticMax, dynMax, 0, m + 1, g, fusedMax, 0);
  const fused = new Float64Array(m + 1);
  const staticP = new Float64Array(m + 1);
  const dynamicP = new Float64Array(m + 1);
  softmaxRowInto(fusedSum, 0, m + 1, fused, 0);
  softmaxRowInto(staticSum, 0, m + 1, staticP, 0);
  softmaxRowInto(dynSum, 0, m + 1, dynamicP, 0);
  const order = Array.from({ length: m }, (_, j) => j).sort(
    (a, b) => fused[b]! - fused[a]! || kept.classes[at + a]! - kept.classes[at + b]!,
  );
  const ms = marginRow(staticMax, 0, m + 1);
  const md = marginRow(dynMax, 0, m + 1);
  const mf = marginRow(fusedMax, 0, m + 1);
  const staticTop = argmaxRow(staticMax, 0, m + 1);
  const dynTop = argmaxRow(dynMax, 0, m + 1);
  return {
    top: order.slice(0, Math.max(1, Math.min(topK, m))).map((j) => ({
      classIndex: kept.classes[at + j]!,
      fused: fused[j]!,
      static: staticP[j]!,
      dynamic: dynamicP[j]!,
    })),
    effectiveTemperature: effectiveTemperature(ms, md, mf),
    confidenceShrinkageRatio: confidenceShrinkageRatio(ms, md, mf),
    branchesDisagree: staticTop !== dynTop && (staticTop < m || dynTop < m),
    approximation: `${keptClassesText({ keep: m, classCount })}: the branches' probabilities exact; the fused ones with the rest at its chord (exact at g = 0 and 1); T_eff and CSR with the rest's largest fused logit at its upper bound (exact at g = 0 and 1 where both branches' top classes are kept); the top classes among the kept`,
  };
}
