/**
 * The metrics' one-pass row kernel (scores.ts scoreRowsInto) against the pieces it fuses, bit for
 * bit: the softmax and log-sum-exp of fusion/logits.ts (what every view shows), each sample's NLL
 * and Brier term as proper-scores.ts defines them, and the top-label pairs of topLabelRowsInto,
 * including exact ties (lowest index) and logits one ulp apart; and the same scores written over
 * the logits themselves (a knob turn's in-place scoring); and the fused row scorer's top-label-only
 * pass against its full pass.
 */
import { describe, expect, it } from 'vitest';
import { logSumExpRow, softmaxRowInto } from '../../src-shared/fusion/logits';
import { sampleBrierOfRow } from '../../src-shared/metrics/proper-scores';
import { FusedRowScorer } from '../../src-shared/metrics/fused-row-scorer';
import {
  allocateTopLabelScores,
  scoreRowsInto,
  scoredLogits,
  topLabelRowsInto,
  type TopLabelScores,
} from '../../src-shared/metrics/scores';
import { normalDraw, seededRandom } from '../../src-shared/random';

const k = 7;
const n = 3000;

function rowsOf(make: (i: number, c: number) => number): Float64Array {
  return Float64Array.from({ length: n * k }, (_, at) => make(Math.floor(at / k), at % k));
}

const top = (): TopLabelScores => ({
  confidence: new Float64Array(n),
  predicted: new Int32Array(n),
  correct: new Uint8Array(n),
});

describe('scoreRowsInto', () => {
  const random = seededRandom(4);
  const sets: Array<[string, Float64Array | Float32Array]> = [
    ['normal logits, scale 4', rowsOf(() => 4 * normalDraw(random))],
    ['float32 logits', Float32Array.from(rowsOf(() => 3 * normalDraw(random)))],
    ['exact ties (lowest index wins)', rowsOf((i, c) => (c % 3 === 0 ? 2 : i % 5))],
    ['near ties', rowsOf((i, c) => (c < 2 ? 1 + c * Number.EPSILON : -1 - (i % 3)))],
    ['very spread (underflowing terms)', rowsOf(() => 400 * normalDraw(random))],
  ];
  for (const [name, logits] of sets) {
    it(`gives the softmax, NLL, Brier and top-label pairs of the separate definitions: ${name}`, () => {
      const labels = Int32Array.from({ length: n }, (_, i) => (i * 5) % k);
      const out = {
        probabilities: new Float64Array(n * k),
        sampleNll: new Float64Array(n),
        sampleBrier: new Float64Array(n),
        top: top(),
      };
      scoreRowsInto(logits, labels, k, 0, n, out);
      const expected = new Float64Array(n * k);
      for (let i = 0; i < n; i++) {
        const lse = softmaxRowInto(logits, i * k, k, expected, i * k);
        expect(lse).toBe(logSumExpRow(logits, i * k, k));
        expect(out.sampleNll[i]).toBe(lse - logits[i * k + labels[i]!]!);
        expect(out.sampleBrier[i]).toBe(sampleBrierOfRow(expected, i * k, k, labels[i]!));
      }
      expect(out.probabilities).toEqual(expected);
      const expectedTop = top();
      topLabelRowsInto(expected, labels, k, 0, n, expectedTop);
      expect(out.top).toEqual(expectedTop);
    });

    it(`writes the same scores over the logits themselves as into a buffer of their own: ${name}`, () => {
      const labels = Int32Array.from({ length: n }, (_, i) => (i * 3) % k);
      const apart = scoredLogits(logits, k, labels);
      const overwritten = Float64Array.from(logits);
      const inPlace = scoredLogits(overwritten, k, labels, true);
      expect(inPlace.scores.probabilities).toBe(overwritten);
      expect(inPlace.scores.logits).toBeNull();
      expect(apart.scores.logits).toBe(logits);
      expect(inPlace.scores.probabilities).toEqual(apart.scores.probabilities);
      expect(inPlace.scores.sampleNll).toEqual(apart.scores.sampleNll);
      expect(inPlace.scores.sampleBrier).toEqual(apart.scores.sampleBrier);
      expect(inPlace.top).toEqual(apart.top);
    });
  }

  it('names a non-finite logit by sample and class, and logits too large to sum', () => {
    const logits = rowsOf(() => 1);
    const out = {
      probabilities: new Float64Array(n * k),
      sampleNll: new Float64Array(n),
      sampleBrier: new Float64Array(n),
      top: top(),
    };
    const labels = new Int32Array(n);
    logits[12 * k + 4] = Number.NEGATIVE_INFINITY;
    expect(() => scoreRowsInto(logits, labels, k, 0, n, out)).toThrow(
      /logit 4 of sample 12 is not finite \(-Infinity\)/,
    );
    logits[12 * k + 4] = 1;
    logits[20 * k] = 1.7e308;
    logits[20 * k + 1] = 1.7e308;
    expect(() => scoreRowsInto(logits, labels, k, 0, n, out)).toThrow(/logits of sample 20 are too large to sum/);
  });
});

describe('FusedRowScorer.topLabelInto', () => {
  const random = seededRandom(8);
  const frames = 2000;
  const classes = 9;
  const zStatic = Float32Array.from({ length: frames * classes }, () => 3 * normalDraw(random));
  const zDyn = Float32Array.from({ length: frames * classes }, () => 3 * normalDraw(random));
  // exact ties between branches and classes in some rows: the lowest index must win as in scoreInto
  for (let i = 0; i < frames; i += 7)
    for (let c = 0; c < classes; c++) zStatic[i * classes + c] = zDyn[i * classes + c] = c % 2;
  const g = Float64Array.from({ length: frames }, (_, i) => (i % 11 === 0 ? -0.2 : i % 13 === 0 ? 1.3 : random()));
  const labels = Int32Array.from({ length: frames }, (_, i) => (i * 7) % classes);
  const chosen = Int32Array.from({ length: frames / 2 }, (_, j) => 2 * j + (j % 3 === 0 ? 1 : 0));
  const chosenLabels = Int32Array.from(chosen, (f) => labels[f]!);

  for (const temperature of [1, 0.6, 2.5])
    it(`gives scoreInto's top-label pairs bit for bit (temperature ${temperature})`, () => {
      const scorer = new FusedRowScorer(classes);
      const full = {
        sampleNll: new Float64Array(chosen.length),
        sampleBrier: new Float64Array(chosen.length),
        top: allocateTopLabelScores(chosen.length),
      };
      scorer.scoreInto(zStatic, zDyn, g, chosen, chosenLabels, 1 / temperature, full);
      const lean = allocateTopLabelScores(chosen.length);
      scorer.topLabelInto(zStatic, zDyn, g, chosen, chosenLabels, 1 / temperature, lean);
      expect(lean).toEqual(full.top);
    });

  it('refuses a fused row that is not finite, naming the frame and class', () => {
    const bad = Float32Array.from(zDyn);
    bad[chosen[5]! * classes + 2] = Number.POSITIVE_INFINITY;
    const scorer = new FusedRowScorer(classes);
    expect(() =>
      scorer.topLabelInto(zStatic, bad, g, chosen, chosenLabels, 1, allocateTopLabelScores(chosen.length)),
    ).toThrow(`logit 2 of sample ${chosen[5]} is not finite`);
  });
});
