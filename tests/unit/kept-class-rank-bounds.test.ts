/**
 * The rank bounds of kept-class metrics (src-shared/metrics/kept-class-rank-bounds.ts) count ranges
 * on cells instead of sorting them. Held here against the same bounds counted exactly, pair by pair:
 * never below them (a cell count may only widen a bound), and close to them where a trained
 * classifier puts its frames, crowded just under a confidence of 1.
 */
import { describe, expect, it } from 'vitest';
import type { KeptClassFrameBounds } from '../../src-shared/metrics/kept-class-bounds';
import { aurcBound, aurocBound, eAurcBound } from '../../src-shared/metrics/kept-class-rank-bounds';
import type { TopLabelScores } from '../../src-shared/metrics/scores';
import { seededRandom } from '../../src-shared/random';

interface Frames {
  top: TopLabelScores;
  bounds: KeptClassFrameBounds;
  unsettled: number;
}

/** `peaked`: most confidences within 1e-2..1e-8 of 1, as a trained classifier's; some ties. */
function framesOf(n: number, peaked: boolean, seed: number): Frames {
  const random = seededRandom(seed);
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  const up = new Float64Array(n);
  const down = new Float64Array(n);
  const uncertainTop1 = new Uint8Array(n);
  let unsettled = 0;
  for (let i = 0; i < n; i++) {
    confidence[i] =
      i % 10 === 9 && i > 0
        ? confidence[i - 1]! // a tie
        : peaked && random() < 0.7
          ? 1 - 10 ** -(2 + 6 * random())
          : 0.1 + 0.89 * random();
    correct[i] = random() < 0.85 ? 1 : 0;
    // ranges from far below a cell to many cells wide
    up[i] = Math.min(1 - confidence[i]!, 10 ** -(3 + 6 * random()));
    down[i] = 10 ** -(4 + 10 * random());
    if (random() < 0.03) {
      uncertainTop1[i] = 1;
      unsettled++;
    }
  }
  const top = { confidence, correct, predicted: new Int32Array(n) };
  const bounds = {
    confidenceUp: up,
    confidenceDown: down,
    nll: new Float64Array(n),
    brier: new Float64Array(n),
    uncertainTop1,
  };
  return { top, bounds, unsettled };
}

/** The bounds' definitions, counted pair by pair (O(n^2)). */
function exactBounds({ top, bounds, unsettled }: Frames): { auroc: number; aurc: number } {
  const n = top.confidence.length;
  const lo = (i: number) => Math.max(0, top.confidence[i]! - bounds.confidenceDown[i]!);
  const hi = (i: number) => Math.min(1, top.confidence[i]! + bounds.confidenceUp[i]!);
  const settled = [...Array(n).keys()].filter((i) => bounds.uncertainTop1[i] === 0);
  const right = settled.filter((i) => top.correct[i] === 1);
  const wrong = settled.filter((i) => top.correct[i] === 0);
  let apart = 0;
  for (const a of right) for (const b of wrong) if (hi(a) < lo(b) || hi(b) < lo(a)) apart++;
  const [p, q] = [right.length, wrong.length];
  const auroc = Math.min(1, (p * q - apart) / (p * q) + (2 * unsettled) / Math.min(p, q));
  const harmonic = [0];
  for (let m = 1; m <= n; m++) harmonic.push(harmonic[m - 1]! + 1 / m);
  let sum = unsettled * harmonic[n]!;
  for (const i of wrong) {
    const first = 1 + settled.filter((j) => lo(j) > hi(i)).length;
    const last = 1 + settled.filter((j) => j !== i && hi(j) >= lo(i)).length + unsettled;
    sum += harmonic[last - 1]! - harmonic[first - 1]!;
  }
  return { auroc, aurc: Math.min(1, sum / n) };
}

describe('kept-class rank bounds on cells against the same bounds counted exactly', () => {
  for (const peaked of [false, true])
    it(`never below them, and within 0.01 of them (${peaked ? 'confidences crowded near 1' : 'spread'})`, () => {
      for (const seed of [1, 2, 3]) {
        const frames = framesOf(1500, peaked, seed);
        const exact = exactBounds(frames);
        const auroc = aurocBound(frames.top, frames.bounds, frames.unsettled);
        const aurc = aurcBound(frames.top, frames.bounds, frames.unsettled);
        expect(auroc, `AUROC, seed ${seed}`).toBeGreaterThanOrEqual(exact.auroc - 1e-12);
        expect(aurc, `AURC, seed ${seed}`).toBeGreaterThanOrEqual(exact.aurc - 1e-12);
        expect(auroc - exact.auroc, `AUROC, seed ${seed}`).toBeLessThan(0.01);
        expect(aurc - exact.aurc, `AURC, seed ${seed}`).toBeLessThan(0.01);
        // E-AURC: the AURC's bound and the optimal term's range, at most 1
        const eAurc = eAurcBound(frames.top, frames.bounds, frames.unsettled);
        expect(eAurc).toBeGreaterThanOrEqual(aurc);
        expect(eAurc).toBeLessThanOrEqual(1);
      }
    });
});
