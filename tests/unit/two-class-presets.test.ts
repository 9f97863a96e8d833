/**
 * Presets on two-class inputs follow their libraries' conventions (metric-suite.ts): scikit-learn's
 * calibration_curve (positive class only) against its own output carried as a fixture
 * (tests/fixtures/reference/calibration/two-class-sklearn-curve.json, from
 * tools/reference/two_class_sklearn_curve.py); the other positive-class presets against the same
 * metric computed directly on (p(class 1), y = 1); netcal's top-label convention against the
 * top-label metric; every identity names the convention it followed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  PRESET_NAMES,
  PRESET_TWO_CLASS_CONVENTIONS,
  presetMetrics,
  scoresFromLogits,
  smoothEce,
  topLabelBinnedMetrics,
  topLabelScores,
  type TopLabelScores,
} from '../../src-shared/metrics';

const reference = JSON.parse(
  readFileSync(new URL('../fixtures/reference/calibration/two-class-sklearn-curve.json', import.meta.url), 'utf8'),
) as { logits: number[]; labels: number[]; ece: number };
const scores = scoresFromLogits(Float64Array.from(reference.logits), 2, reference.labels);
const n = scores.sampleCount;
const positive = {
  confidence: Float64Array.from({ length: n }, (_, i) => scores.probabilities[2 * i + 1]),
  predicted: new Int32Array(n).fill(1),
  correct: Uint8Array.from(scores.labels, (y) => (y === 1 ? 1 : 0)),
};
const value = (preset: (typeof PRESET_NAMES)[number], name: string) =>
  presetMetrics(preset, scores).find((m) => m.name === name)!;

describe('presets on two-class inputs', () => {
  it("sklearn-curve-10 takes the positive class, as calibration_curve does: sklearn's ECE to 1e-12", () => {
    const ece = value('sklearn-curve-10', 'ECE');
    expect(Math.abs(ece.value - reference.ece)).toBeLessThan(1e-12);
    expect(ece.identity).toContain('positive class: p(class 1) against y = 1');
  });

  it('torchmetrics, uncertainty-calibration and relplot take the positive class; netcal the top label', () => {
    const ew15Extra = { scheme: 'equal-width', bins: 15, edgeRule: 'one-in-extra-bin' } as const;
    const direct = (pairs: TopLabelScores, spec: Parameters<typeof topLabelBinnedMetrics>[1], name: string) =>
      topLabelBinnedMetrics(pairs, spec).find((m) => m.name === name)!.value;
    expect(value('torchmetrics-15', 'ECE').value).toBe(direct(positive, ew15Extra, 'ECE'));
    expect(value('smooth-ece', 'SmoothECE').value).toBe(smoothEce(positive.confidence, positive.correct).value.value);
    const kumar = presetMetrics('kumar-debiased-l2-15', scores);
    // the library's binary mode: one error, no marginal average over the two classes
    expect(kumar.map((m) => m.name)).toEqual(['debiased L2-CE']);
    const em15 = { scheme: 'equal-mass', bins: 15, massEdges: 'midpoint', edgeRule: 'right-closed' } as const;
    expect(kumar[0].value).toBe(direct(positive, em15, 'debiased L2-CE'));
    const netcal = value('netcal-10', 'ECE');
    const ew10 = { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' } as const;
    expect(netcal.value).toBe(direct(topLabelScores(scores), ew10, 'ECE'));
    expect(netcal.identity).toContain('two classes: top-label convention');
    // the two conventions really differ on this input
    expect(netcal.value).not.toBe(direct(positive, ew10, 'ECE'));
  });

  it("every preset's identity names the convention it followed on two classes, and none on more", () => {
    for (const preset of PRESET_NAMES) {
      for (const m of presetMetrics(preset, scores)) {
        expect(m.identity).toContain(`${PRESET_TWO_CLASS_CONVENTIONS[preset]} convention`);
      }
    }
    const three = scoresFromLogits(
      Float64Array.from({ length: 30 * 3 }, (_, i) => Math.sin(i)),
      3,
      Array(30).fill(0),
    );
    for (const preset of PRESET_NAMES)
      for (const m of presetMetrics(preset, three)) expect(m.identity).not.toContain('convention');
  });
});
