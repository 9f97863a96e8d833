/**
 * A kept-class trace's frame readout (src-shared/trace/kept-frame-readout.ts) against the full
 * trace's (frame-readout.ts): each branch's probabilities of the kept classes exact at any gate,
 * the fused ones exact at g = 0 and 1, and there T_eff and CSR too where both branches' top classes
 * are kept; the top classes the kept ones
 * in the full readout's order; whether the branches disagree, where it can be told.
 */
import { describe, expect, it } from 'vitest';
import { argmaxRow } from '../../src-shared/fusion/logits';
import { frameReadout } from '../../src-shared/trace/frame-readout';
import { keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import { keptFrameReadout } from '../../src-shared/trace/kept-frame-readout';
import { syntheticTrace } from '../support/synthetic-trace';

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));

describe('the frame readout of a kept-class trace', () => {
  const k = 40;
  const trace = syntheticTrace({ frames: 120, classCount: k, seed: 17 });
  const kept = keepLeadingClasses(trace, 8);

  it('gives the branches exactly, the fused output exactly at the ends, and says what is estimated', () => {
    let disagreementsTold = 0;
    let exactEnds = 0;
    for (let frame = 0; frame < trace.frameCount; frame++) {
      for (const g of [0, 0.3, 1]) {
        const full = frameReadout(trace.zStatic, trace.zDyn, frame * k, k, g, k);
        const estimate = keptFrameReadout(kept, k, frame, g, 3);
        expect(estimate.approximation).toMatch(/^8 of 40 classes kept a frame: the branches' probabilities exact/);
        expect(estimate.top).toHaveLength(3);
        const byClass = new Map(full.top.map((row) => [row.classIndex, row] as const));
        for (const row of estimate.top) {
          const exact = byClass.get(row.classIndex)!;
          expect(close(row.static, exact.static), `frame ${frame} class ${row.classIndex} static`).toBe(true);
          expect(close(row.dynamic, exact.dynamic), `frame ${frame} class ${row.classIndex} dynamic`).toBe(true);
          if (g === 0 || g === 1) expect(close(row.fused, exact.fused), `frame ${frame} fused at ${g}`).toBe(true);
        }
        // the kept classes in the full readout's order (one softmax denominator: the order of the
        // fused logits, exact at any gate)
        const keptHere = new Set(kept.classes.subarray(frame * 8, frame * 8 + 8));
        const fullKept = full.top.filter((row) => keptHere.has(row.classIndex)).slice(0, 3);
        expect(estimate.top.map((row) => row.classIndex)).toEqual(fullKept.map((row) => row.classIndex));
        // a branch's margin is exact where its top class is kept
        const topsKept = [trace.zStatic, trace.zDyn].every((z) => keptHere.has(argmaxRow(z, frame * k, k)));
        if ((g === 0 || g === 1) && topsKept) {
          exactEnds++;
          expect(close(estimate.effectiveTemperature, full.effectiveTemperature)).toBe(true);
          expect(close(estimate.confidenceShrinkageRatio, full.confidenceShrinkageRatio)).toBe(true);
        }
        expect(estimate.branchesDisagree, `frame ${frame}`).toBe(full.branchesDisagree);
        if (full.branchesDisagree) disagreementsTold++;
      }
    }
    expect(disagreementsTold).toBeGreaterThan(0);
    expect(exactEnds).toBeGreaterThan(100);
  });
});
