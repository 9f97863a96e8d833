/**
 * Issue 32: the desk's conformal prediction sets. q_hat and every held-out sample's coverage and
 * set size against a numpy implementation (tests/fixtures/reference/conformal, PROVENANCE.md),
 * and the per-sample evaluator against the membership matrix of predictionSets.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { empiricalCoverage, fitConformal, predictionSets } from '../../src-shared/calibrators';
import { conformalSetColumns } from '../../src-shared/calibrators/conformal-sets';
import { scoresFromLogits } from '../../src-shared/metrics/scores';
import { syntheticClassifier } from '../support/synthetic-classifier';

interface Reference {
  classCount: number;
  calibration: { probabilities: number[]; labels: number[] };
  test: { probabilities: number[]; labels: number[] };
  cases: Array<{ score: 'lac' | 'aps'; alpha: number; qHat: number; covered: number[]; size: number[] }>;
}
const reference = JSON.parse(
  readFileSync(new URL('../fixtures/reference/conformal/conformal-300x6.json', import.meta.url), 'utf8'),
) as Reference;

describe('conformal sets against the numpy reference', () => {
  const k = reference.classCount;
  const calibration = {
    p: Float64Array.from(reference.calibration.probabilities),
    y: Int32Array.from(reference.calibration.labels),
  };
  const test = { p: Float64Array.from(reference.test.probabilities), y: Int32Array.from(reference.test.labels) };
  for (const c of reference.cases)
    it(`${c.score} at alpha ${c.alpha}: q_hat, each sample's coverage and set size`, () => {
      const params = fitConformal(calibration.p, calibration.y, k, c.alpha, c.score);
      expect(params.qHat).toBeCloseTo(c.qHat, 12);
      const columns = conformalSetColumns(params, test.p, test.y, k);
      expect(Array.from(columns.covered)).toEqual(c.covered);
      expect(Array.from(columns.size)).toEqual(c.size);
    });
});

describe('the calibration rank', () => {
  it('is the ceil((n + 1)(1 - alpha))-th smallest score, not one above it where floating point rounds up', () => {
    // n = 9, alpha = 0.7: (n + 1)(1 - alpha) = 3 exactly, 3.0000000000000004 in floating point
    const probabilities = Float64Array.from({ length: 18 }, (_, i) => (i % 2 === 0 ? (i + 2) / 40 : 1 - (i + 1) / 40));
    const labels = new Int32Array(9);
    const scores = Array.from({ length: 9 }, (_, i) => 1 - probabilities[2 * i]!).sort((a, b) => a - b);
    expect(fitConformal(probabilities, labels, 2, 0.7, 'lac').qHat).toBe(scores[2]);
  });
});

describe('the per-sample evaluator', () => {
  it('agrees with the membership matrix on 2,000 samples of 40 classes', () => {
    const k = 40;
    const cal = syntheticClassifier({ n: 1000, classCount: k, temperature: 1.5, seed: 5 });
    const held = syntheticClassifier({ n: 2000, classCount: k, temperature: 1.5, seed: 6 });
    const calP = scoresFromLogits(cal.logits, k, cal.labels).probabilities;
    const heldP = scoresFromLogits(held.logits, k, held.labels).probabilities;
    for (const score of ['lac', 'aps'] as const) {
      const params = fitConformal(calP, cal.labels, k, 0.1, score);
      const sets = predictionSets(params, heldP, k);
      const columns = conformalSetColumns(params, heldP, held.labels, k);
      const whole = empiricalCoverage(sets, held.labels, k);
      const covered = columns.covered.reduce((s, v) => s + v, 0) / held.labels.length;
      const size = columns.size.reduce((s, v) => s + v, 0) / held.labels.length;
      expect(covered, score).toBeCloseTo(whole.coverage, 12);
      expect(size, score).toBeCloseTo(whole.meanSetSize, 12);
    }
  });

  it('refuses probabilities that do not fit the labels, and randomised APS', () => {
    const params = { score: 'aps' as const, alpha: 0.1, qHat: 0.9, randomized: false };
    expect(() => conformalSetColumns(params, new Float64Array(5), new Int32Array(2), 3)).toThrow(/5 probabilities/);
    expect(() =>
      conformalSetColumns({ ...params, randomized: true }, new Float64Array(6), new Int32Array(2), 3),
    ).toThrow(/randomised/);
  });
});
