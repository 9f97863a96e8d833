/**
 * Density- and proximity-aware calibration (src-shared/calibrators: density-aware-calibration.ts,
 * proximity-informed-calibration.ts, feature-bank.ts) on a synthetic set built to need them: the
 * model is well calibrated on frames near the bulk of the data in feature space and over-confident
 * on frames far from it, which one temperature cannot fix and a distance in feature space reveals.
 */
import { describe, expect, it } from 'vitest';
import {
  CalibratorSpecSchema,
  buildFeatureBank,
  calibrateLogits,
  compareCalibrators,
  featureBankOf,
  featureBankSpec,
  fitCalibrator,
  meanNeighbourDistance,
  type RowFeatures,
} from '../../src-shared/calibrators';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { drawCategory } from '../support/synthetic-classifier';

const K = 5;
const WIDTH = 16;

/**
 * Frames with features near one of two directions (typical, 70 %) or spread widely (atypical);
 * true logits t = 2 g, labels from softmax(t); the model shows t on typical frames and 3 t on
 * atypical ones.
 */
function featureDependentMiscalibration(n: number, seed: number) {
  const random = seededRandom(seed);
  const logits = new Float64Array(n * K);
  const labels = new Int32Array(n);
  const features = new Float32Array(n * WIDTH);
  const truth = new Float64Array(K);
  const p = new Float64Array(K);
  for (let i = 0; i < n; i++) {
    const typical = random() < 0.7;
    const cluster = random() < 0.5 ? 0 : 1;
    for (let j = 0; j < WIDTH; j++) {
      const centre = typical ? (j === cluster ? 4 : 0) : 0;
      features[i * WIDTH + j] = centre + (typical ? 0.3 : 1.5) * normalDraw(random);
    }
    let max = -Infinity;
    for (let c = 0; c < K; c++) {
      truth[c] = 2 * normalDraw(random);
      max = Math.max(max, truth[c]);
    }
    let sum = 0;
    for (let c = 0; c < K; c++) {
      p[c] = Math.exp(truth[c] - max);
      sum += p[c];
      logits[i * K + c] = (typical ? 1 : 3) * truth[c];
    }
    labels[i] = drawCategory(p, sum, random);
  }
  return { logits, labels, features: { width: WIDTH, values: features } satisfies RowFeatures };
}

const heldOutNll = (logp: Float64Array, labels: Int32Array) => {
  let sum = 0;
  for (let i = 0; i < labels.length; i++) sum -= logp[i * K + labels[i]];
  return sum / labels.length;
};

describe('feature bank', () => {
  it('round-trips through its base64 spec, finds exact nearest neighbours, and leaves a frame out of its own', () => {
    const { features } = featureDependentMiscalibration(300, 3);
    const bank = buildFeatureBank(features.values, WIDTH, 300);
    const decoded = featureBankOf(JSON.parse(JSON.stringify(featureBankSpec(bank))));
    expect(Array.from(decoded.values)).toEqual(Array.from(bank.values));
    // brute force by hand against the helper, leaving out frame 7's own row
    const query = bank.values.subarray(7 * WIDTH, 8 * WIDTH);
    const distances = Array.from({ length: 300 }, (_, r) =>
      r === 7 ? Infinity : Math.hypot(...Array.from(query, (q, j) => q - bank.values[r * WIDTH + j])),
    ).sort((a, b) => a - b);
    const expected = distances.slice(0, 10).reduce((a, b) => a + b, 0) / 10;
    expect(meanNeighbourDistance(bank, query, 10, 7, new Float64Array(10))).toBeCloseTo(expected, 5);
  });

  it('refuses a bank that is not base64 or not the size it says', () => {
    const { features } = featureDependentMiscalibration(50, 4);
    const spec = featureBankSpec(buildFeatureBank(features.values, WIDTH, 50));
    expect(() => featureBankOf({ ...spec, rows: 49 })).toThrow(/not 49 x 16 float32/);
    expect(() => featureBankOf({ ...spec, float32Base64: '%%%' })).toThrow(/not valid base64/);
  });
});

describe('density- and proximity-aware calibration', () => {
  const fit = featureDependentMiscalibration(3000, 1);
  const test = featureDependentMiscalibration(3000, 2);

  it('DAC and ProCal lower the held-out NLL below temperature scaling where miscalibration follows feature density', () => {
    const nll = (method: 'temperature' | 'dac' | 'procal') => {
      const { spec } = fitCalibrator(method, fit.logits, fit.labels, K, fit.features);
      const parsed = CalibratorSpecSchema.parse(JSON.parse(JSON.stringify(spec)));
      return heldOutNll(calibrateLogits(parsed, test.logits, K, test.features), test.labels);
    };
    const [temperature, dac, procal] = [nll('temperature'), nll('dac'), nll('procal')];
    console.log(
      `[feature calibrators] held-out NLL: temperature ${temperature.toFixed(4)}, DAC ${dac.toFixed(4)}, ProCal ${procal.toFixed(4)}`,
    );
    expect(dac).toBeLessThan(temperature - 0.03);
    expect(procal).toBeLessThan(temperature);
  });

  it('keep the top-1, and the comparison table carries them when the frames have features', () => {
    const comparison = compareCalibrators(
      fit.logits,
      fit.labels,
      K,
      ['temperature', 'dac', 'procal'],
      {
        kind: 'time',
        evaluateFraction: 0.3,
      },
      { features: fit.features },
    );
    for (const m of comparison.methods) expect(m.top1Changed, m.method).toBe(0);
    expect(comparison.methods.map((m) => m.spec.method)).toEqual(['temperature', 'dac', 'procal']);
  });

  it('refuse to fit on features or labels that would make their parameters NaN, naming the row', () => {
    const nanFeature = { width: WIDTH, values: Float32Array.from(fit.features.values) };
    nanFeature.values[5 * WIDTH + 2] = Number.NaN;
    expect(() => fitCalibrator('dac', fit.logits, fit.labels, K, nanFeature)).toThrow(
      /feature 2 of row 5 is not finite/,
    );
    expect(() => fitCalibrator('procal', fit.logits, fit.labels, K, { width: 0, values: new Float32Array(0) })).toThrow(
      /positive whole width/,
    );
    const badLabels = Int32Array.from(fit.labels, (y, i) => (i === 9 ? K : y));
    expect(() => fitCalibrator('temperature', fit.logits, badLabels, K)).toThrow(/label 5 of row 9 is outside 0..4/);
    expect(() => fitCalibrator('pts', fit.logits.subarray(0, 10), fit.labels, K)).toThrow(/do not make 3000 rows of 5/);
  });

  it('refuse, when a settings file is read, a bank that does not decode, and more neighbours than bank rows', () => {
    const { spec } = fitCalibrator('dac', fit.logits, fit.labels, K, fit.features);
    if (spec.method !== 'dac') throw new Error('expected a dac spec');
    const bytes = Uint8Array.from(atob(spec.bank.float32Base64), (c) => c.charCodeAt(0));
    new DataView(bytes.buffer).setFloat32(0, Number.NaN, true);
    const nanBank = {
      ...spec,
      bank: { ...spec.bank, float32Base64: btoa(String.fromCharCode(...bytes.subarray(0, 64))) },
    };
    const refused = CalibratorSpecSchema.safeParse(nanBank);
    expect(refused.success).toBe(false);
    expect(JSON.stringify(refused.error?.issues)).toMatch(/bank.*float32Base64/);
    const small = fitCalibrator('dac', fit.logits.subarray(0, 20 * K), fit.labels.subarray(0, 20), K, {
      width: WIDTH,
      values: fit.features.values.subarray(0, 20 * WIDTH),
    }).spec;
    const tooMany = CalibratorSpecSchema.safeParse({ ...small, neighbours: 64 });
    expect(tooMany.success).toBe(false);
    expect(JSON.stringify(tooMany.error?.issues)).toMatch(/more neighbours than the bank has rows/);
  });

  it("refuse to fit or apply without features, and with another model's feature width", () => {
    expect(() => fitCalibrator('dac', fit.logits, fit.labels, K)).toThrow(/needs the model's features/);
    const { spec } = fitCalibrator('procal', fit.logits, fit.labels, K, fit.features);
    expect(() => calibrateLogits(spec, test.logits, K)).toThrow(/needs the model's features/);
    expect(() => calibrateLogits(spec, test.logits, K, { width: 8, values: new Float32Array(3000 * 8) })).toThrow(
      /fitted on 16 features per frame; these frames have 8/,
    );
  });
});
