/** Hostile input to the metrics: a typed error naming the problem, or a documented finite result. */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../src-shared/errors';
import { metricSuite } from '../../src-shared/metrics/metric-suite';
import { negativeLogLikelihood } from '../../src-shared/metrics/proper-scores';
import { scoresFromLogits, scoresFromProbabilities } from '../../src-shared/metrics/scores';
import { auroc } from '../../src-shared/metrics/selective';
import { topLabelScores } from '../../src-shared/metrics/scores';
import { CalibrationAccumulator } from '../../src-shared/metrics/streaming';

function expectInvalid(f: () => unknown, message: RegExp): void {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).code).toBe('INVALID_INPUT');
    expect((error as KnobError).message).toMatch(message);
    return;
  }
  throw new Error('expected an INVALID_INPUT error');
}

describe('refused with a typed error', () => {
  it('NaN or infinite logits, naming the sample and class', () => {
    expectInvalid(
      () => scoresFromLogits(Float64Array.of(1, 2, Number.NaN, 0), 2, [0, 1]),
      /logit 0 of sample 1 is not finite/,
    );
    expectInvalid(() => scoresFromLogits(Float64Array.of(1, Infinity), 2, [0]), /not finite/);
  });
  it('labels out of range or not integers', () => {
    expectInvalid(() => scoresFromLogits(Float64Array.of(1, 2), 2, [2]), /label 2 of sample 0 is outside 0..1/);
    expectInvalid(() => scoresFromLogits(Float64Array.of(1, 2), 2, [0.5]), /label 0.5/);
    expectInvalid(() => scoresFromLogits(Float64Array.of(1, 2), 2, [-1]), /label -1/);
  });
  it('mismatched lengths, empty input, a single class', () => {
    expectInvalid(
      () => scoresFromLogits(Float64Array.of(1, 2, 3), 2, [0, 1]),
      /3 scores do not match 2 labels x 2 classes/,
    );
    expectInvalid(() => scoresFromLogits(new Float64Array(0), 3, []), /empty/);
    expectInvalid(() => scoresFromLogits(Float64Array.of(1, 2), 1, [0, 0]), /at least two classes/);
    expectInvalid(() => new CalibrationAccumulator({ classCount: 1 }), /at least two classes/);
  });
  it('probabilities outside [0, 1] or not summing to 1', () => {
    expectInvalid(() => scoresFromProbabilities([0.5, 0.6], 2, [0]), /sum to 1.1/);
    expectInvalid(() => scoresFromProbabilities([-0.1, 1.1], 2, [0]), /outside \[0, 1\]/);
    expectInvalid(() => scoresFromProbabilities([Number.NaN, 1], 2, [0]), /outside \[0, 1\]/);
  });
});

describe('documented results', () => {
  it('all-identical confidences: every metric finite, AUROC 0.5 (all ties)', () => {
    const probabilities = new Float64Array(200).fill(0.5);
    const labels = Array.from({ length: 100 }, (_, i) => i % 2);
    const scores = scoresFromProbabilities(probabilities, 2, labels);
    for (const m of metricSuite(scores)) expect(Number.isFinite(m.value), m.identity).toBe(true);
    expect(auroc(topLabelScores(scores))!.value).toBe(0.5);
  });
  it('confidences of exactly 0 and 1: binned metrics finite; NLL from probabilities is +Infinity when the true class had probability 0', () => {
    const scores = scoresFromProbabilities([1, 0, 0, 1, 1, 0, 0, 1], 2, [0, 1, 1, 1]);
    for (const m of metricSuite(scores).filter((v) => v.name !== 'NLL'))
      expect(Number.isFinite(m.value), m.identity).toBe(true);
    expect(negativeLogLikelihood(scores).value).toBe(Infinity);
  });
  it('AUROC is null (not NaN) when every prediction is right', () => {
    const scores = scoresFromLogits(Float64Array.of(3, 0, 0, 3), 2, [0, 1]);
    expect(auroc(topLabelScores(scores))).toBeNull();
    for (const m of metricSuite(scores)) expect(Number.isNaN(m.value), m.identity).toBe(false);
  });
  it('huge logits stay finite (log-sum-exp, no overflow)', () => {
    const scores = scoresFromLogits(Float64Array.of(1e300, -1e300, 0, 1e308), 2, [1, 1]);
    expect(Number.isFinite(negativeLogLikelihood(scores).value)).toBe(true);
  });
});
