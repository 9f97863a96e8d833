/**
 * Metrics against tests/fixtures/reference/calibration (values computed by public libraries on the same
 * fixture; DEFINITIONS.md). Tolerance: 1e-9 against float64 references, 1e-5 against torchmetrics.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EdgeRule } from '../../src-shared/metrics/bin-location';
import { assignBins, type BinningSpec } from '../../src-shared/metrics/binning';
import { binStatisticsOf } from '../../src-shared/metrics/bin-statistics';
import { expectedCalibrationError } from '../../src-shared/metrics/calibration-error';
import { classwiseMetrics, topLabelBinnedMetrics } from '../../src-shared/metrics/binned-metrics';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';

const fixture = JSON.parse(readFileSync('tests/fixtures/reference/calibration/synthetic-2000x10.json', 'utf8')) as {
  logits: number[][];
  labels: number[];
};
const expected = JSON.parse(
  readFileSync('tests/fixtures/reference/calibration/synthetic-2000x10.expected.json', 'utf8'),
) as Record<string, { value: number } & Record<string, unknown>>;
const scores = scoresFromLogits(Float64Array.from(fixture.logits.flat()), 10, fixture.labels);
const top = topLabelScores(scores);

const EW15: BinningSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };
const EM15_MID: BinningSpec = { scheme: 'equal-mass', bins: 15, massEdges: 'midpoint', edgeRule: 'right-closed' };
const EM15_QUANT: BinningSpec = { scheme: 'equal-mass', bins: 15, massEdges: 'quantile', edgeRule: 'left-closed' };

function value(metrics: { name: string; value: number }[], name: string): number {
  const found = metrics.find((m) => m.name === name);
  if (!found) throw new Error(`no metric ${name}`);
  return found.value;
}

function close(actual: number, reference: number, tolerance = 1e-9): void {
  expect(Math.abs(actual - reference), `${actual} vs ${reference}`).toBeLessThanOrEqual(
    tolerance * Math.max(1, Math.abs(reference)),
  );
}

describe('binned metrics on synthetic-2000x10', () => {
  it('accuracy', () => {
    close(top.correct.reduce((a, b) => a + b, 0) / top.correct.length, expected.accuracy as unknown as number);
  });
  it('ECE, 15 equal-width bins, L1 (uncertainty-calibration, netcal, relplot, torchmetrics)', () => {
    close(value(topLabelBinnedMetrics(top, EW15), 'ECE'), expected.ece_toplabel_ew15_l1!.value);
  });
  it('ECE, 15 equal-mass bins, both edge rules (uncertainty-calibration midpoint, netcal quantile)', () => {
    close(value(topLabelBinnedMetrics(top, EM15_MID), 'ECE'), expected.ece_toplabel_em15_l1!.value);
    close(value(topLabelBinnedMetrics(top, EM15_QUANT), 'ECE'), expected.ece_toplabel_em15_l1!.value);
  });
  it('RMSCE plug-in and MCE, 15 equal-width bins', () => {
    const m = topLabelBinnedMetrics(top, EW15);
    close(value(m, 'RMSCE'), expected.rmsce_toplabel_ew15_l2_plugin!.value);
    close(value(m, 'MCE'), expected.mce_toplabel_ew15!.value);
  });
  it('debiased L2 (Kumar et al. 2019), top-label, equal-mass and equal-width', () => {
    close(value(topLabelBinnedMetrics(top, EM15_MID), 'debiased L2-CE'), expected.l2ce_toplabel_em15_debiased!.value);
    close(
      value(
        topLabelBinnedMetrics(top, { scheme: 'equal-width', bins: 15, edgeRule: 'right-closed' }),
        'debiased L2-CE',
      ),
      expected.l2ce_toplabel_ew15_debiased!.value,
    );
  });
  it('netcal ACE (unweighted over non-empty bins)', () => {
    close(value(topLabelBinnedMetrics(top, EW15), 'ACE (netcal)'), expected.netcal_ace_ew15!.value);
  });
  it('classwise ECE (equal-width) and marginal debiased L2 (equal-mass)', () => {
    close(
      value(classwiseMetrics(scores, { scheme: 'equal-width', bins: 15, edgeRule: 'right-closed' }), 'classwise ECE'),
      expected.classwise_ece_ew15_l1!.value,
    );
    close(
      value(classwiseMetrics(scores, EM15_MID), 'marginal debiased L2-CE'),
      expected.marginal_l2ce_em15_debiased!.value,
    );
  });
  it('every value says what it is', () => {
    const ece = topLabelBinnedMetrics(top, EW15).find((m) => m.name === 'ECE')!;
    expect(ece.identity).toBe('ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)');
  });
});

describe('bin-edge conventions on the 9-point table (DEFINITIONS.md 4.2, B = 5)', () => {
  const c = Float64Array.of(0.2, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 0.5, 0.0);
  const a = Uint8Array.of(1, 0, 0, 1, 1, 1, 0, 1, 0);
  const table: Array<[EdgeRule, number]> = [
    ['left-closed', 0.21111],
    ['one-in-extra-bin', 0.25556],
    ['right-closed', 0.34444],
  ];
  for (const [edgeRule, printed] of table) {
    it(`${edgeRule}: ${printed}`, () => {
      const bins = assignBins(c, { scheme: 'equal-width', bins: 5, edgeRule });
      const ece = expectedCalibrationError(binStatisticsOf(bins.binOf, bins.binCount, c, a));
      expect(Math.abs(ece - printed)).toBeLessThanOrEqual(0.5e-5);
    });
  }
  it('numpy linspace edges: 0.6 falls below the third edge (0.6000000000000001)', () => {
    expect(assignBins(Float64Array.of(0.6), { scheme: 'equal-width', bins: 5, edgeRule: 'left-closed' }).binOf[0]).toBe(
      2,
    );
  });
});

import { mmce } from '../../src-shared/metrics/mmce';
import {
  accuracy,
  multiclassBrier,
  negativeLogLikelihood,
  topLabelBrier,
} from '../../src-shared/metrics/proper-scores';
import { auroc, selectiveRisk } from '../../src-shared/metrics/selective';
import {
  ReflectedGaussianSmoother,
  reflectedGaussianSmoothDirect,
  smoothEce,
  smootherFor,
  smoothGridNodes,
} from '../../src-shared/metrics/smooth-ece';
import { seededRandom } from '../../src-shared/random';
import { metricSuite, presetMetrics, PRESET_NAMES } from '../../src-shared/metrics/metric-suite';
import { syntheticClassifier } from '../support/synthetic-classifier';

describe('unbinned metrics on synthetic-2000x10', () => {
  it('SmoothECE and its bandwidth match relplot', () => {
    const result = smoothEce(top.confidence, top.correct);
    expect(result.sigma).toBe((expected.smooth_ece as unknown as { sigma: number }).sigma);
    close(result.value.value, expected.smooth_ece!.value, 1e-6);
  });
  it("SmoothECE's convolution by FFT equals relplot's direct sum on the grid", () => {
    const random = seededRandom(4);
    for (const sigma of [1, 0.3, 0.05, 0.004]) {
      const nodes = smoothGridNodes(sigma);
      const values = Float64Array.from({ length: nodes }, () => random() - 0.3);
      const direct = reflectedGaussianSmoothDirect(values, sigma);
      const viaFft = new ReflectedGaussianSmoother(nodes, sigma).smooth(values);
      const scale = direct.reduce((max, v) => Math.max(max, Math.abs(v)), 0);
      for (let j = 0; j < nodes; j++)
        expect(Math.abs(viaFft[j]! - direct[j]!), `sigma ${sigma}, node ${j}`).toBeLessThan(1e-12 * scale);
      // two series through one complex transform (real and imaginary parts): each equals its own direct
      // sum within rounding of the larger (a mass 1000 times the residuals); a leak would be of its size
      const mass = Float64Array.from({ length: nodes }, () => 1000 * random());
      const directMass = reflectedGaussianSmoothDirect(mass, sigma);
      const pairA = new Float64Array(nodes);
      const pairB = new Float64Array(nodes);
      smootherFor(nodes, sigma).smoothPairInto(values, mass, pairA, pairB);
      const massScale = directMass.reduce((max, v) => Math.max(max, Math.abs(v)), 0);
      for (let j = 0; j < nodes; j++) {
        expect(Math.abs(pairA[j]! - direct[j]!), `sigma ${sigma}, node ${j}`).toBeLessThan(1e-12 * massScale);
        expect(Math.abs(pairB[j]! - directMass[j]!), `sigma ${sigma}, node ${j}`).toBeLessThan(1e-12 * massScale);
      }
    }
  });
  it('MMCE (netcal)', () => close(mmce(top.confidence, top.correct).value, expected.mmce!.value));
  it('NLL from logits, multiclass and top-label Brier, accuracy', () => {
    close(negativeLogLikelihood(scores).value, expected.nll!.value);
    close(multiclassBrier(scores).value, expected.brier_multiclass_sum!.value);
    close(topLabelBrier(top).value, expected.brier_toplabel!.value);
    close(accuracy(top).value, expected.accuracy as unknown as number);
  });
  it('AUROC and AURC', () => {
    close(auroc(top)!.value, expected.auroc_confidence_vs_correct!.value);
    close(selectiveRisk(top).find((m) => m.name === 'AURC')!.value, expected.aurc!.value);
  });
  it('the full suite and every preset give finite values with identities', () => {
    const suite = metricSuite(scores, { includeMmce: true });
    expect(suite.length).toBeGreaterThan(30);
    for (const m of suite) {
      expect(Number.isFinite(m.value), m.identity).toBe(true);
      expect(m.identity.length).toBeGreaterThan(m.name.length);
    }
    for (const preset of PRESET_NAMES) {
      const values = presetMetrics(preset, scores);
      expect(values.length).toBeGreaterThan(0);
      for (const m of values) expect(m.identity).toContain(`[preset ${preset}]`);
    }
    close(
      presetMetrics('torchmetrics-15', scores).find((m) => m.name === 'ECE')!.value,
      expected.ece_toplabel_ew15_l1!.value,
      1e-5,
    );
  });
  it("a preset takes the suite's values of the same identity instead of computing them again, and only those", () => {
    const suite = metricSuite(scores);
    for (const preset of PRESET_NAMES)
      expect(presetMetrics(preset, scores, top, true, suite), preset).toEqual(presetMetrics(preset, scores, top));
    // the values reused are the suite's own: a marked copy of them comes back, tagged with the preset
    const marked = suite.map((m) => ({ ...m, value: m.name.includes('debiased L2-CE') ? 0.123456 : m.value }));
    const kumar = presetMetrics('kumar-debiased-l2-15', scores, top, true, marked);
    expect(kumar.map((m) => [m.name, m.value])).toEqual([
      ['debiased L2-CE', 0.123456],
      ['marginal debiased L2-CE', 0.123456],
    ]);
    expect(kumar.every((m) => m.identity.endsWith('[preset kumar-debiased-l2-15]'))).toBe(true);
    // nor approximations or values not computed, though their identity is the same
    const approximate = marked.map((m) => ({ ...m, approximation: 'a sketch' }));
    expect(presetMetrics('kumar-debiased-l2-15', scores, top, true, approximate)).toEqual(
      presetMetrics('kumar-debiased-l2-15', scores, top),
    );
    // two classes: the preset reads the positive class, the suite the top label (the same
    // identity before the preset's tag): nothing is taken
    const data = syntheticClassifier({ n: 600, classCount: 2, temperature: 1.5, seed: 4 });
    const twoClass = scoresFromLogits(data.logits, 2, data.labels);
    const twoTop = topLabelScores(twoClass);
    const twoMarked = metricSuite(twoClass, {}, twoTop).map((m) => ({ ...m, value: 0.123456 }));
    const positive = presetMetrics('kumar-debiased-l2-15', twoClass, twoTop, true, twoMarked);
    expect(positive.map((m) => m.value)).not.toContain(0.123456);
    expect(positive).toEqual(presetMetrics('kumar-debiased-l2-15', twoClass, twoTop));
    // values of another binning are not taken: the suite at 10 equal-width bins only
    const other = metricSuite(scores, { binnings: [{ scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' }] });
    expect(presetMetrics('kumar-debiased-l2-15', scores, top, true, other)).toEqual(
      presetMetrics('kumar-debiased-l2-15', scores, top),
    );
  });
});

import { topLabelPerClassMetrics } from '../../src-shared/metrics/binned-metrics';

describe('top-label ECE per predicted class (Gupta & Ramdas 2021)', () => {
  it('equals the per-class ECEs weighted by n_l / n (and their plain mean for the unweighted variant)', () => {
    let weighted = 0;
    let unweighted = 0;
    let classes = 0;
    for (let c = 0; c < 10; c++) {
      const idx = [...top.predicted.keys()].filter((i) => top.predicted[i] === c);
      if (idx.length === 0) continue;
      const ece = value(
        topLabelBinnedMetrics(
          {
            confidence: Float64Array.from(idx, (i) => top.confidence[i]!),
            predicted: new Int32Array(idx.length),
            correct: Uint8Array.from(idx, (i) => top.correct[i]!),
          },
          EW15,
        ),
        'ECE',
      );
      weighted += (idx.length / 2000) * ece;
      unweighted += ece;
      classes++;
    }
    const [tl, tlUnweighted] = topLabelPerClassMetrics(top, 10, EW15);
    close(tl!.value, weighted, 1e-12);
    close(tlUnweighted!.value, unweighted / classes, 1e-12);
  });
});
