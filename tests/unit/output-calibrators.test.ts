/**
 * Calibrators of the model's output (src-shared/calibrators/output-calibrator.ts) and their
 * held-out comparison (calibrator-evaluation.ts): against scikit-learn's outputs carried as a
 * fixture (tests/fixtures/reference/calibrators, with its generator), against the optimum's
 * defining property (a vanishing gradient) for matrix scaling without regularisation, and the
 * splits' guarantees (every frame evaluated once by k-fold, the time split fits on the past).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CALIBRATION_METHODS,
  CalibratorSpecSchema,
  calibrateLogits,
  compareCalibrators,
  compileCalibrator,
  fitAffineLogitScaling,
  fitCalibrator,
  fitIsotonic,
  fitPlatt,
  isotonicAt,
  ODIR_GRID,
  type CalibrationMethod,
  type HeldOutSplit,
} from '../../src-shared/calibrators';
import { PROBABILITY_FLOOR } from '../../src-shared/calibrators/probability-floor';
import { logSumExpRow } from '../../src-shared/fusion/logits';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { drawCategory, rowDependentMiscalibration, syntheticClassifier } from '../support/synthetic-classifier';

const reference = JSON.parse(
  readFileSync(new URL('../fixtures/reference/calibrators/sklearn-calibrators.json', import.meta.url), 'utf8'),
) as {
  binary: {
    scores: number[];
    outcomes: number[];
    testScores: number[];
    platt: { a: number; b: number };
    isotonicAtTest: number[];
  };
  multiclass: {
    classCount: number;
    logits: number[];
    labels: number[];
    testLogits: number[];
    isotonicOneVsRest: number[];
  };
};

describe('calibrators against scikit-learn 1.2.1', () => {
  it("Platt scaling with Platt's targets: sklearn's (a, b) to 1e-4", () => {
    const { params } = fitPlatt(Float64Array.from(reference.binary.scores), reference.binary.outcomes, {
      smoothedTargets: true,
    });
    // sklearn stops BFGS at its default gradient tolerance; Newton here converges further.
    expect(params.a).toBeCloseTo(reference.binary.platt.a, 4);
    expect(params.b).toBeCloseTo(reference.binary.platt.b, 4);
  });

  it("isotonic regression: sklearn's predictions (clip out of bounds) to 1e-12", () => {
    const { params } = fitIsotonic(Float64Array.from(reference.binary.scores), reference.binary.outcomes);
    reference.binary.testScores.forEach((s, i) =>
      expect(isotonicAt(params, s), `score ${s}`).toBeCloseTo(reference.binary.isotonicAtTest[i], 12),
    );
  });

  it("one-vs-rest isotonic on a 4-class softmax: sklearn's normalised probabilities, floored at 1e-6, to 1e-12", () => {
    const { classCount: k } = reference.multiclass;
    const { spec } = fitCalibrator(
      'isotonic',
      Float64Array.from(reference.multiclass.logits),
      Int32Array.from(reference.multiclass.labels),
      k,
    );
    const out = calibrateLogits(spec, Float64Array.from(reference.multiclass.testLogits), k);
    const sklearn = reference.multiclass.isotonicOneVsRest;
    // sklearn has no floor: its rows floored here by the floor's definition (probability-floor.ts),
    // in linear space: q' = eps below eps, the rest scaled by (1 - m eps) / (their sum)
    const eps = PROBABILITY_FLOOR;
    let floored = 0;
    for (let o = 0; o < sklearn.length; o += k) {
      const row = sklearn.slice(o, o + k);
      const raised = row.filter((q) => q < eps).length;
      const kept = row.filter((q) => q >= eps).reduce((a, q) => a + q, 0);
      // a row with nothing below the floor is compared with sklearn's own row, unfloored
      const expected = raised === 0 ? row : row.map((q) => (q < eps ? eps : (q * (1 - raised * eps)) / kept));
      if (raised > 0) floored++;
      expected.forEach((q, c) => expect(Math.exp(out[o + c]), `value ${o + c}`).toBeCloseTo(q, 12));
    }
    // both kinds of row are checked: 37 of the 60 test rows have a class sklearn gives below 1e-6
    expect([floored, sklearn.length / k - floored]).toEqual([37, 23]);
  });
});

describe('output calibrators', () => {
  const data = syntheticClassifier({ n: 3000, classCount: 5, temperature: 2, scale: 2, seed: 21 });

  it('matrix scaling without regularisation reaches the multinomial logistic regression optimum (gradient < 1e-6)', () => {
    const k = 5;
    const { params } = fitAffineLogitScaling('matrix', data.logits, data.labels, k, 0);
    // The mean NLL's gradient at the fitted (W, b), computed here from its definition.
    const gradW = new Float64Array(k * k);
    const gradB = new Float64Array(k);
    const row = new Float64Array(k);
    for (let i = 0; i < data.labels.length; i++) {
      for (let r = 0; r < k; r++) {
        row[r] = params.bias[r];
        for (let c = 0; c < k; c++) row[r] += params.weights[r * k + c] * data.logits[i * k + c];
      }
      const lse = logSumExpRow(row, 0, k);
      for (let r = 0; r < k; r++) {
        const residual = Math.exp(row[r] - lse) - (data.labels[i] === r ? 1 : 0);
        gradB[r] += residual / data.labels.length;
        for (let c = 0; c < k; c++) gradW[r * k + c] += (residual * data.logits[i * k + c]) / data.labels.length;
      }
    }
    for (const g of [...gradW, ...gradB]) expect(Math.abs(g)).toBeLessThan(1e-6);
  });

  it('every method: a spec that survives JSON and the schema, normalised log-probabilities, no allocation per row', () => {
    // features for the methods that read them (dac, procal); the others ignore them
    const random = seededRandom(12);
    const features = { width: 8, values: Float32Array.from({ length: 3000 * 8 }, () => normalDraw(random)) };
    // conditions for the condition-aware one: three, each a third of the rows
    const conditions = { names: ['a', 'b', 'c'], codes: Int32Array.from(data.labels, (_, i) => i % 3) };
    for (const method of CALIBRATION_METHODS) {
      const { spec, report } = fitCalibrator(method, data.logits, data.labels, 5, features, undefined, conditions);
      const parsed = CalibratorSpecSchema.parse(JSON.parse(JSON.stringify(spec)));
      expect(parsed, method).toEqual(spec);
      const out = calibrateLogits(parsed, data.logits.subarray(0, 50), 5, {
        width: 8,
        values: features.values.subarray(0, 50 * 8),
      });
      for (let i = 0; i < 10; i++) {
        let sum = 0;
        for (let c = 0; c < 5; c++) sum += Math.exp(out[i * 5 + c]);
        expect(sum, `${method} row ${i}`).toBeCloseTo(1, 12);
      }
      expect(report.objective, method).toBeGreaterThan(0);
      // The compiled row function writes into the caller's buffers only.
      const calibrator = compileCalibrator(spec);
      const target = new Float64Array(5);
      const scratch = new Float64Array(5);
      calibrator.rowInto(data.logits, 0, 5, target, 0, scratch, features.values, 0);
      expect(Array.from(target)).toEqual(Array.from(out.subarray(0, 5)));
    }
  });

  it('a comparison reports each method before its fit and stops before the next once cancelled', () => {
    const controller = new AbortController();
    const seen: Array<[number, number, string]> = [];
    const split = { kind: 'time' as const, evaluateFraction: 0.3 };
    const compare = () =>
      compareCalibrators(data.logits, data.labels, 5, ['temperature', 'isotonic', 'vector'], split, {
        signal: controller.signal,
        onProgress: (done, total, stage) => {
          seen.push([done, total, stage]);
          if (done === 1) controller.abort();
        },
      });
    expect(compare).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
    // the temperature and isotonic fits started; the vector fit did not
    expect(seen.map(([done, total]) => [done, total])).toEqual([
      [0, 3],
      [1, 3],
    ]);
    expect(seen[0]![2]).toMatch(/temperature/i);
  });

  it('a fit that takes many optimiser steps stops within one once cancelled (Dirichlet, PTS, matrix; cross-fitted or not)', () => {
    const cases: Array<[CalibrationMethod, HeldOutSplit]> = [
      ['dirichlet', { kind: 'time', evaluateFraction: 0.3 }],
      ['dirichlet', { kind: 'kfold', folds: 3, seed: 0 }],
      ['pts', { kind: 'time', evaluateFraction: 0.3 }],
      ['matrix', { kind: 'time', evaluateFraction: 0.3 }],
    ];
    for (const [method, split] of cases) {
      const controller = new AbortController();
      let reads = 0;
      // the abort lands after the check before the fit: only the fit itself can see it
      const signal = {
        get aborted() {
          reads++;
          return controller.signal.aborted;
        },
        addEventListener: () => undefined,
        removeEventListener: () => undefined,
      };
      const compare = () =>
        compareCalibrators(data.logits, data.labels, 5, [method], split, {
          signal,
          onProgress: () => controller.abort(),
        });
      expect(compare, `${method} ${split.kind}`).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
      // once before the method, then once before any fitting work (the optimiser's first step, or
      // the first fold's check): nothing after it ran
      expect(reads, `${method} ${split.kind}`).toBe(2);
    }
  });

  it('temperature scaling fitted on over-confident logits lowers held-out NLL and ECE, and never changes the top-1', () => {
    const comparison = compareCalibrators(data.logits, data.labels, 5, ['temperature', 'isotonic'], {
      kind: 'time',
      evaluateFraction: 0.3,
    });
    expect(comparison.fitFrames).toBe(2100);
    expect(comparison.evaluatedFrames).toBe(900);
    const figure = (figures: typeof comparison.before, name: string) => figures.find((f) => f.name === name)!;
    const temperature = comparison.methods[0];
    expect(temperature.spec).toMatchObject({ method: 'temperature' });
    expect(temperature.top1Changed).toBe(0);
    expect(figure(temperature.figures, 'NLL').value).toBeLessThan(figure(comparison.before, 'NLL').value);
    expect(figure(temperature.figures, 'ECE').value).toBeLessThan(figure(comparison.before, 'ECE').value);
    // the reliability curves overlaid in the desk: every evaluated frame in a bin, and temperature
    // scaling (top-1 unchanged) moves each bin's confidence towards its accuracy: a smaller ECE
    const frames = (d: typeof comparison.beforeReliability) => d.bins.reduce((n, b) => n + b.count, 0);
    expect(frames(comparison.beforeReliability)).toBe(900);
    expect(frames(temperature.reliability)).toBe(900);
    expect(temperature.reliability.identity).toBe(comparison.beforeReliability.identity);
    const binnedGap = (d: typeof comparison.beforeReliability) =>
      d.bins.reduce((sum, b) => sum + (b.count * Math.abs(b.gap ?? 0)) / 900, 0);
    expect(binnedGap(temperature.reliability)).toBeCloseTo(figure(temperature.figures, 'ECE').value!, 12);
    expect(binnedGap(comparison.beforeReliability)).toBeCloseTo(figure(comparison.before, 'ECE').value!, 12);
    for (const f of temperature.figures) {
      expect(f.lo, f.name).toBeLessThanOrEqual(f.hi);
      expect(f.method).toMatch(/percentile bootstrap|Wilson score interval|bias-corrected basic bootstrap/);
    }
    expect(temperature.figures.map((f) => f.name)).toEqual([
      'accuracy',
      'NLL',
      'Brier',
      'ECE',
      'ECE (equal-mass)',
      'classwise ECE',
      'SmoothECE',
    ]);
    // Isotonic one-vs-rest renormalises the row: it may change the top-1, and says how often.
    expect(comparison.methods[1].top1Changed).toBeGreaterThanOrEqual(0);
  });

  it('a replay with a calibrator gives the calibrated fused output, with its top-1 and confidence', async () => {
    const { syntheticTrace } = await import('../support/synthetic-trace');
    const { replay } = await import('../../src-shared/trace/replay');
    const { DEFAULT_GATE_SETTINGS } = await import('../../src-shared/gate');
    const trace = syntheticTrace({ frames: 400, seed: 4 });
    const plain = replay(trace, DEFAULT_GATE_SETTINGS, { keepFusedLogits: true });
    for (const method of ['temperature', 'isotonic'] as const) {
      const { spec } = fitCalibrator(method, plain.fusedLogits!, trace.labels!, trace.classCount);
      const calibrated = replay(trace, DEFAULT_GATE_SETTINGS, {
        keepFusedLogits: true,
        calibrator: compileCalibrator(spec),
      });
      const expected = calibrateLogits(spec, plain.fusedLogits!, trace.classCount);
      expect(Array.from(calibrated.fusedLogits!), method).toEqual(Array.from(expected));
      // The gate is not touched by the calibrator.
      expect(Array.from(calibrated.g)).toEqual(Array.from(plain.g));
      for (let i = 0; i < trace.frameCount; i++) {
        const row = expected.subarray(i * trace.classCount, (i + 1) * trace.classCount);
        expect(calibrated.confidence[i]).toBeCloseTo(Math.exp(Math.max(...row)), 15);
      }
    }
  });

  it('Dirichlet-ODIR beats temperature scaling held out where the miscalibration is class by class', () => {
    // Labels drawn from softmax(A z + c) with per-class scales and offsets: one temperature cannot
    // undo that, a full map on ln p can.
    const k = 5;
    const n = 8000;
    const random = seededRandom(77);
    const scales = [0.5, 1.6, 1, 0.7, 1.3];
    const offsets = [0.8, -0.5, 0, 0.3, -0.6];
    const logits = new Float64Array(n * k);
    const labels = new Int32Array(n);
    const p = new Float64Array(k);
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let c = 0; c < k; c++) {
        logits[i * k + c] = 2 * normalDraw(random);
        p[c] = Math.exp(scales[c] * logits[i * k + c] + offsets[c]);
        sum += p[c];
      }
      labels[i] = drawCategory(p, sum, random);
    }
    const comparison = compareCalibrators(logits, labels, k, ['temperature', 'dirichlet'], {
      kind: 'time',
      evaluateFraction: 0.3,
    });
    const nll = (m: number) => comparison.methods[m].figures.find((f) => f.name === 'NLL')!.value;
    expect(nll(1)).toBeLessThan(nll(0) - 0.02);
    // lambda = mu chosen by cross-validation from the grid, and said in the report
    const dirichlet = comparison.methods[1];
    expect(dirichlet.spec.method).toBe('dirichlet');
    if (dirichlet.spec.method === 'dirichlet') {
      expect(ODIR_GRID).toContain(dirichlet.spec.offDiagonal);
      expect(dirichlet.spec.intercept).toBe(dirichlet.spec.offDiagonal);
    }
    expect(dirichlet.report.method).toMatch(/by 3-fold cross-validation on \d+ rows \(held-out NLL 0\.0001: /);
  });

  it('PTS beats temperature scaling held out where the needed temperature differs by row, and keeps the top-1', () => {
    const k = 10;
    const fit = rowDependentMiscalibration({ n: 4000, classCount: k, seed: 1 });
    const test = rowDependentMiscalibration({ n: 4000, classCount: k, seed: 2 });
    const heldOutNll = (method: 'temperature' | 'pts') => {
      const { spec } = fitCalibrator(method, fit.logits, fit.labels, k);
      const calibrated = calibrateLogits(spec, test.logits, k);
      let sum = 0;
      for (let i = 0; i < test.labels.length; i++) {
        sum -= calibrated[i * k + test.labels[i]];
        const row = (values: ArrayLike<number>) => Array.from({ length: k }, (_, c) => values[i * k + c]);
        const top = (values: number[]) => values.indexOf(Math.max(...values));
        expect(top(row(calibrated))).toBe(top(row(test.logits)));
      }
      return sum / test.labels.length;
    };
    const temperature = heldOutNll('temperature');
    const pts = heldOutNll('pts');
    console.log(`[pts] held-out NLL: temperature scaling ${temperature.toFixed(4)}, PTS ${pts.toFixed(4)}`);
    expect(pts).toBeLessThan(temperature - 0.05);
  });

  it('a PTS spec whose layers do not match its sizes is refused, naming the field', () => {
    const { spec } = fitCalibrator('pts', data.logits, data.labels, 5);
    const broken = { ...spec, w2: [1, 2, 3] };
    const parsed = CalibratorSpecSchema.safeParse(broken);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(/w2.*needs 25 values/);
  });

  it('k-fold cross-fitting evaluates every labelled frame once; none fits and evaluates on all', () => {
    const kfold = compareCalibrators(data.logits, data.labels, 5, ['temperature'], {
      kind: 'kfold',
      folds: 5,
      seed: 3,
    });
    expect(kfold.evaluatedFrames).toBe(3000);
    expect(kfold.split).toMatch(/5-fold cross-fitting/);
    const none = compareCalibrators(data.logits, data.labels, 5, ['temperature'], { kind: 'none' });
    expect(none.fitFrames).toBe(3000);
    expect(none.evaluatedFrames).toBe(3000);
    // Fitted on all frames either way: the same temperature.
    expect(kfold.methods[0].spec).toEqual(none.methods[0].spec);
  });
});
