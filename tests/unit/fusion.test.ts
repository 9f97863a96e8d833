import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  argmaxRow,
  confidenceShrinkageRatio,
  effectiveTemperature,
  expNonPositive,
  fuseRowInto,
  fuseTop1Into,
  fusionDiagnosticsInto,
  logSoftmaxRowInto,
  logSumExpRow,
  marginRow,
  softmaxRowInto,
  topProbabilityRow,
} from '../../src-shared/fusion';
import { seededRandom } from '../../src-shared/random';

const FC = { seed: 7, numRuns: 300 };
const logit = fc.double({ min: -50, max: 50, noNaN: true });

describe('expNonPositive', () => {
  it('is within 2 ulp of Math.exp down to the underflow limit, and exact at the ends', () => {
    const random = seededRandom(3);
    let worst = 0;
    for (let i = 0; i < 200_000; i++) {
      const x = i < 100_000 ? -40 * random() : -745 * random();
      const expected = Math.exp(x);
      if (expected < 1e-300) continue;
      worst = Math.max(worst, Math.abs(expNonPositive(x) - expected) / expected);
    }
    expect(worst).toBeLessThan(4.5e-16);
    expect(expNonPositive(0)).toBe(1);
    expect(expNonPositive(-Infinity)).toBe(0);
    expect(expNonPositive(-746)).toBe(0);
    expect(expNonPositive(-745.1)).toBe(Math.exp(-745.1));
  });
});

describe('softmax and log-softmax in float64', () => {
  it('are stable for huge logits and agree with each other', () => {
    const z = Float64Array.of(1000, 999, -1000, 0);
    const p = new Float64Array(4);
    const lp = new Float64Array(4);
    softmaxRowInto(z, 0, 4, p, 0);
    logSoftmaxRowInto(z, 0, 4, lp, 0);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 15);
    expect(p[0]).toBeCloseTo(1 / (1 + Math.exp(-1)), 15);
    expect(lp[2]).toBeCloseTo(-2000 - Math.log1p(Math.exp(-1)), 10);
    expect(logSumExpRow(z, 0, 4)).toBeCloseTo(1000 + Math.log1p(Math.exp(-1)), 12);
    expect(topProbabilityRow(z, 0, 4)).toBe(p[0]);
  });
  it('argmax ties go to the lowest index; margin of a tie is 0', () => {
    const z = Float32Array.of(1, 3, 3, 2);
    expect(argmaxRow(z, 0, 4)).toBe(1);
    expect(marginRow(z, 0, 4)).toBe(0);
    expect(marginRow(Float32Array.of(5), 0, 1)).toBe(0);
  });
});

describe('convex fusion', () => {
  it('the batched top-1 path equals row fusion bit for bit, and clamps g only at the readout', () => {
    const random = seededRandom(11);
    const n = 500;
    const k = 7;
    const zs = Float32Array.from({ length: n * k }, () => 10 * (random() - 0.5));
    const zd = Float32Array.from({ length: n * k }, () => 10 * (random() - 0.5));
    const g = Float64Array.from({ length: n }, () => 1.4 * random() - 0.2);
    const fused = new Float64Array(n * k);
    const top1 = new Int32Array(n);
    const confidence = new Float64Array(n);
    fuseTop1Into(zs, zd, g, k, 0, n, top1, confidence, fused, new Float64Array(k));
    const row = new Float64Array(k);
    for (let i = 0; i < n; i++) {
      fuseRowInto(zs, zd, i * k, k, g[i]!, row, 0);
      for (let c = 0; c < k; c++) expect(fused[i * k + c]).toBe(row[c]);
      expect(top1[i]).toBe(argmaxRow(row, 0, k));
      expect(confidence[i]).toBe(topProbabilityRow(row, 0, k));
      const gate = Math.min(1, Math.max(0, g[i]!));
      expect(row[0]).toBe((1 - gate) * zs[i * k]! + gate * zd[i * k]!);
    }
    // without a confidence array: the same fused rows and top-1, nothing else written
    const fusedAgain = new Float64Array(n * k);
    const top1Again = new Int32Array(n);
    fuseTop1Into(zs, zd, g, k, 0, n, top1Again, null, fusedAgain, new Float64Array(k));
    expect(fusedAgain).toEqual(fused);
    expect(top1Again).toEqual(top1);
  });
});

describe('effective temperature and confidence shrinkage', () => {
  const fusedMargins = (zs: number[], zd: number[], g: number) => {
    const k = zs.length;
    const out = new Float64Array(k);
    fuseRowInto(Float64Array.from(zs), Float64Array.from(zd), 0, k, g, out, 0);
    return {
      ms: marginRow(Float64Array.from(zs), 0, k),
      md: marginRow(Float64Array.from(zd), 0, k),
      mf: marginRow(out, 0, k),
    };
  };

  it('T_eff >= 1 and CSR <= 1 for two classes, any logits and g in [0, 1]', () => {
    fc.assert(
      fc.property(
        fc.tuple(logit, logit),
        fc.tuple(logit, logit),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (zs, zd, g) => {
          const { ms, md, mf } = fusedMargins(zs, zd, g);
          expect(effectiveTemperature(ms, md, mf)).toBeGreaterThanOrEqual(1 - 1e-12);
          expect(confidenceShrinkageRatio(ms, md, mf)).toBeLessThanOrEqual(1 + 1e-12);
        },
      ),
      FC,
    );
  });

  it('T_eff >= 1 and CSR <= 1 for any K when both branches rank the same two classes on top', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 12 }),
        fc.array(logit, { minLength: 24, maxLength: 24 }),
        fc.array(logit, { minLength: 24, maxLength: 24 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (k, a, b, g) => {
          const zs = a.slice(0, k);
          const zd = b.slice(0, k);
          // force classes 0 and 1 to be top-1 and top-2 in both branches
          const lift = (z: number[]) => {
            const rest = Math.max(...z.slice(2));
            z[1] = Math.max(z[1]!, rest) + 0.5;
            z[0] = Math.max(z[0]!, z[1]!) + 0.5;
          };
          lift(zs);
          lift(zd);
          const { ms, md, mf } = fusedMargins(zs, zd, g);
          expect(effectiveTemperature(ms, md, mf)).toBeGreaterThanOrEqual(1 - 1e-12);
          expect(confidenceShrinkageRatio(ms, md, mf)).toBeLessThanOrEqual(1 + 1e-12);
        },
      ),
      FC,
    );
  });

  it("T_eff >= 1 and CSR <= 1 for any K and any other branch when one branch's runner-ups are all equal", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 12 }),
        fc.integer({ min: 0, max: 11 }),
        fc.double({ min: 0, max: 20, noNaN: true }),
        logit,
        fc.array(logit, { minLength: 12, maxLength: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (k, topClass, marginFlat, runnerUp, other, g, flatIsStatic) => {
          // a branch as `train_knob.py` trains the dynamic one: its top, every other class at one value
          const flat = Array.from({ length: k }, (_, c) => (c === topClass % k ? runnerUp + marginFlat : runnerUp));
          const zOther = other.slice(0, k);
          const { ms, md, mf } = flatIsStatic ? fusedMargins(flat, zOther, g) : fusedMargins(zOther, flat, g);
          expect(effectiveTemperature(ms, md, mf)).toBeGreaterThanOrEqual(1 - 1e-12);
          expect(confidenceShrinkageRatio(ms, md, mf)).toBeLessThanOrEqual(1 + 1e-12);
        },
      ),
      FC,
    );
  });

  it('for K >= 3 with different runner-ups T_eff < 1 can happen (documented limit of the definition)', () => {
    const { ms, md, mf } = fusedMargins([2, 1, 0], [2, 0, 1.9], 0.5);
    expect(ms).toBe(1);
    expect(md).toBeCloseTo(0.1, 12);
    expect(mf).toBeCloseTo(1.05, 12);
    expect(effectiveTemperature(ms, md, mf)).toBeLessThan(1);
    expect(confidenceShrinkageRatio(ms, md, mf)).toBeGreaterThan(1);
  });

  it('limits: m_fuse = 0 gives +Infinity; all margins 0 give 1; never NaN', () => {
    expect(effectiveTemperature(1, 2, 0)).toBe(Infinity);
    expect(effectiveTemperature(0, 0, 0)).toBe(1);
    expect(confidenceShrinkageRatio(0, 0, 0)).toBe(1);
    expect(Number.isNaN(confidenceShrinkageRatio(1e308, 1e308, 0))).toBe(false);
  });

  it('the batched diagnostics equal the scalar definitions', () => {
    const zs = Float32Array.of(2, 1, 0, 0.3, 0.2, 0.1);
    const zd = Float32Array.of(2, 0, 1.9, 0.1, 0.2, 0.3);
    const g = Float64Array.of(0.5, 1.3);
    const teff = new Float64Array(2);
    const csr = new Float64Array(2);
    fusionDiagnosticsInto(zs, zd, g, 3, 0, 2, teff, csr, new Float64Array(3));
    const first = fusedMargins([2, 1, 0], [2, 0, Math.fround(1.9)], 0.5);
    expect(teff[0]).toBe(effectiveTemperature(first.ms, first.md, first.mf));
    const second = fusedMargins([0.3, 0.2, 0.1].map(Math.fround), [0.1, 0.2, 0.3].map(Math.fround), 1);
    expect(csr[1]).toBe(confidenceShrinkageRatio(second.ms, second.md, second.mf));
  });
});
