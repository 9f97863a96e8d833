/**
 * The condition-aware calibrator (conditional-calibration.ts, condition-detector.ts) against what it
 * is defined to be, on seeded synthetic data whose truth is known: conditions that scale the logits
 * by a known factor (so the right temperature of each is that factor), features that tell the
 * conditions apart, and the conditions named by a trace's metadata columns.
 */
import { describe, expect, it } from 'vitest';
import { compileConditionDetector, fitConditionDetector } from '../../src-shared/calibrators/condition-detector';
import {
  conditionsFittable,
  fitConditional,
  MIN_CONDITION_ROWS,
} from '../../src-shared/calibrators/conditional-calibration';
import {
  calibrateLogits,
  CalibratorSpecSchema,
  compileCalibrator,
  fitCalibrator,
} from '../../src-shared/calibrators/output-calibrator';
import { evaluationStatistics } from '../../src-shared/calibrators/calibrator-evaluation';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { conditionsOfFrames } from '../../src-shared/trace/trace-scores';
import type { Trace } from '../../src-shared/trace/trace';
import { conditionSwitches, MAX_CONDITION_SWITCHES } from '../../src-shared/trace/condition-switches';

const K = 5;
const WIDTH = 6;
/** Each condition's logits are the true logits times this: its right temperature. */
const SCALES = [0.6, 1, 2.5];

/**
 * Rows whose labels are drawn from softmax(true logits), shown as scale_c x true logits under
 * condition c (so T_c = scale_c calibrates them), with features centred at a point of their condition.
 */
function conditionedRows(rows: number, seed: number) {
  const random = seededRandom(seed);
  const logits = new Float64Array(rows * K);
  const labels = new Int32Array(rows);
  const codes = new Int32Array(rows);
  const features = new Float32Array(rows * WIDTH);
  for (let i = 0; i < rows; i++) {
    const condition = i % SCALES.length;
    codes[i] = condition;
    const truth = Array.from({ length: K }, () => 2 * normalDraw(random));
    const max = Math.max(...truth);
    const weights = truth.map((z) => Math.exp(z - max));
    let draw = random() * weights.reduce((a, b) => a + b, 0);
    labels[i] = K - 1;
    for (let c = 0; c < K; c++) {
      draw -= weights[c]!;
      if (draw < 0) {
        labels[i] = c;
        break;
      }
    }
    truth.forEach((z, c) => (logits[i * K + c] = SCALES[condition]! * z));
    for (let j = 0; j < WIDTH; j++) features[i * WIDTH + j] = (j === condition ? 3 : 0) + normalDraw(random);
  }
  return {
    logits,
    labels,
    features: { width: WIDTH, values: features },
    conditions: { names: ['a', 'b', 'c'], codes },
  };
}

describe('the condition detector', () => {
  it('tells conditions apart from features it was not fitted on, deterministically', () => {
    const train = conditionedRows(3000, 1);
    const test = conditionedRows(1500, 2);
    const fit = () => fitConditionDetector(train.features.values, WIDTH, train.conditions.codes, 3);
    const { detector } = fit();
    expect(fit().detector).toEqual(detector);
    const compiled = compileConditionDetector(detector);
    let right = 0;
    for (let i = 0; i < 1500; i++)
      if (compiled.conditionOf(test.features.values, i * WIDTH) === test.conditions.codes[i]) right++;
    // the clusters are 3 sd apart along their own axis: Bayes error about 7 %
    expect(right / 1500).toBeGreaterThan(0.88);
  });

  it('reads a constant feature as nothing (scale 0), not as a division by zero', () => {
    const data = conditionedRows(600, 3);
    for (let i = 0; i < 600; i++) data.features.values[i * WIDTH + 5] = 7;
    const { detector } = fitConditionDetector(data.features.values, WIDTH, data.conditions.codes, 3);
    expect(detector.scale[5]).toBe(0);
    expect([...detector.weights, ...detector.bias].every(Number.isFinite)).toBe(true);
  });
});

describe('condition-aware calibration', () => {
  const data = conditionedRows(6000, 4);

  it("fits each condition's temperature to its scale, and applies softmax(z / T) of the detected condition", () => {
    const { params, report } = fitConditional(data.logits, data.labels, K, data.features, data.conditions);
    expect(params.conditions).toEqual(['a', 'b', 'c']);
    params.temperatures.forEach((t, c) => expect(t / SCALES[c]!).toBeCloseTo(1, 1));
    expect(report.method).toMatch(/a: 2000 frames, b: 2000 frames, c: 2000 frames/);
    const spec = CalibratorSpecSchema.parse({ method: 'conditional', ...params });
    const calibrator = compileCalibrator(spec);
    const out = calibrateLogits(spec, data.logits.subarray(0, 30 * K), K, {
      width: WIDTH,
      values: data.features.values.subarray(0, 30 * WIDTH),
    });
    const detector = compileConditionDetector(params.detector);
    for (let i = 0; i < 30; i++) {
      const condition = detector.conditionOf(data.features.values, i * WIDTH);
      expect(calibrator.condition!.detect(data.features.values, i * WIDTH)).toBe(condition);
      const t = params.temperatures[condition]!;
      const scaled = Array.from(data.logits.subarray(i * K, (i + 1) * K), (z) => z / t);
      const max = Math.max(...scaled);
      const lse = max + Math.log(scaled.reduce((s, z) => s + Math.exp(z - max), 0));
      scaled.forEach((z, c) => expect(out[i * K + c]).toBeCloseTo(z - lse, 12));
    }
  });

  it('leaves out conditions with too few frames and frames of no known condition, and says so', () => {
    const codes = Int32Array.from(data.conditions.codes);
    // condition c keeps only MIN_CONDITION_ROWS - 1 frames; a hundred frames have none
    let kept = 0;
    codes.forEach((code, i) => {
      if (code === 2 && kept++ >= MIN_CONDITION_ROWS - 1) codes[i] = -1;
    });
    for (let i = 0; i < 100; i++) codes[i * 3] = -1;
    const { params, report } = fitConditional(data.logits, data.labels, K, data.features, {
      names: ['a', 'b', 'c'],
      codes,
    });
    expect(params.conditions).toEqual(['a', 'b']);
    expect(report.method).toMatch(
      new RegExp(`left out, under ${MIN_CONDITION_ROWS} frames: c ${MIN_CONDITION_ROWS - 1}`),
    );
  });

  it('refuses one condition, and a fit without conditions, by name', () => {
    const one = { names: ['a'], codes: new Int32Array(6000) };
    expect(conditionsFittable(one)).toBe(false);
    expect(conditionsFittable(data.conditions)).toBe(true);
    const short = Int32Array.from({ length: 2 * MIN_CONDITION_ROWS - 1 }, (_, i) => i % 2);
    expect(conditionsFittable({ names: ['a', 'b'], codes: short })).toBe(false);
    expect(() => fitConditional(data.logits, data.labels, K, data.features, one)).toThrow(
      /needs at least two conditions with 30 labelled frames each; the frames have a 6000/,
    );
    expect(() => fitCalibrator('conditional', data.logits, data.labels, K, data.features)).toThrow(
      /needs the condition each frame was recorded under/,
    );
    expect(() => fitCalibrator('conditional', data.logits, data.labels, K, null, undefined, data.conditions)).toThrow(
      /needs the model's features for every frame/,
    );
  });

  it('refuses more conditions than a spec holds, and names too long, before fitting', () => {
    const many = {
      names: Array.from({ length: 70 }, (_, c) => `c${c}`),
      codes: Int32Array.from({ length: 6000 }, (_, i) => i % 70),
    };
    expect(() => fitConditional(data.logits, data.labels, K, data.features, many)).toThrow(
      /at most 64 conditions; the frames have 70 with 30 frames or more/,
    );
    const long = { names: ['a', 'b'.repeat(201), 'c'], codes: data.conditions.codes };
    expect(() => fitConditional(data.logits, data.labels, K, data.features, long)).toThrow(
      /a condition's name is at most 200 characters; 'b+\.\.\.' has 201/,
    );
  });

  it('refuses a spec whose shapes do not agree, naming the field', () => {
    const { params } = fitConditional(data.logits, data.labels, K, data.features, data.conditions);
    const refused = (change: object, field: RegExp) => {
      const result = CalibratorSpecSchema.safeParse({ method: 'conditional', ...params, ...change });
      expect(result.success).toBe(false);
      expect(JSON.stringify(result.error?.issues)).toMatch(field);
    };
    refused({ temperatures: [1, 2] }, /one temperature per condition/);
    refused({ conditions: ['a', 'a', 'b'] }, /condition names must differ/);
    refused({ detector: { ...params.detector, weights: [1] } }, /conditions x features weights/);
    refused({ detector: { ...params.detector, scale: [1] } }, /one scale per feature/);
    refused({ temperatures: [1, 0, 1] }, /temperature/);
  });
});

describe("a frame's condition from the trace's metadata", () => {
  const trace = {
    frameCount: 4,
    metadata: {
      corruption: { kind: 'category', codes: Int32Array.of(0, 1, 1, -1), dictionary: ['none', 'fog'] },
      severity: { kind: 'number', values: Float64Array.of(0, 3, 5, Number.NaN) },
    },
  } as unknown as Trace;
  const frames = Int32Array.of(0, 1, 2, 3);

  it('names it by one column, or several joined, -1 where a value is missing, null where a column is', () => {
    expect(conditionsOfFrames(trace, frames, ['corruption'])).toEqual({
      names: ['none', 'fog'],
      codes: Int32Array.of(0, 1, 1, -1),
    });
    expect(conditionsOfFrames(trace, frames, ['corruption', 'severity'])).toEqual({
      names: ['none, severity 0', 'fog, severity 3', 'fog, severity 5'],
      codes: Int32Array.of(0, 1, 2, -1),
    });
    expect(conditionsOfFrames(trace, Int32Array.of(2, 0), ['severity'])?.names).toEqual(['severity 5', 'severity 0']);
    // a number cell that is not a number has no condition, not one named 'severity NaN'
    expect(conditionsOfFrames(trace, Int32Array.of(3), ['severity'])?.codes).toEqual(Int32Array.of(-1));
    expect(conditionsOfFrames(trace, frames, ['camera'])).toBeNull();
  });
});

describe('the ECE within conditions', () => {
  it('sees the miscalibration that cancels over the mixture: 0.25 within each condition, 0 over both', () => {
    // two classes, every frame's top-label confidence 3/4; condition a right half the time
    // (overconfident by 1/4), condition b always right (underconfident by 1/4)
    const n = 40;
    const logits = Float64Array.from({ length: 2 * n }, (_, at) => (at % 2 === 0 ? Math.log(3) : 0));
    const labels = Int32Array.from({ length: n }, (_, i) => (i < n / 2 && i % 2 === 1 ? 1 : 0));
    const codes = Int32Array.from({ length: n }, (_, i) => (i < n / 2 ? 0 : 1));
    const scores = scoresFromLogits(logits, 2, labels);
    const statistics = evaluationStatistics(scores, topLabelScores(scores), { names: ['a', 'b'], codes });
    const value = (name: string) => statistics.find((s) => s.name === name)!.evaluate(null);
    expect(value('ECE')).toBeCloseTo(0, 12);
    expect(value('ECE within conditions')).toBeCloseTo(0.25, 12);
    // one condition present: no such figure (it would be the ECE)
    const one = evaluationStatistics(scores, topLabelScores(scores), { names: ['a'], codes: new Int32Array(n) });
    expect(one.map((s) => s.name)).not.toContain('ECE within conditions');
  });
});

describe("the calibrator's condition along a recording (the gate chart's marks)", () => {
  const data = conditionedRows(6000, 7);
  const { params } = fitConditional(data.logits, data.labels, K, data.features, data.conditions);
  const calibrator = compileCalibrator(CalibratorSpecSchema.parse({ method: 'conditional', ...params }));
  /** A trace at 30 fps of `frames` rows' features, in the given order. */
  const traceOf = (rows: number[]) =>
    ({
      timestampsSeconds: Float64Array.from(rows, (_, i) => i / 30),
      features: {
        width: WIDTH,
        values: Float32Array.from(
          rows.flatMap((row) => Array.from(data.features.values.subarray(row * WIDTH, (row + 1) * WIDTH))),
        ),
      },
    }) as unknown as Trace;

  it('lists the frames where the detected condition changes, each named as the frame readout names it', () => {
    // segments of 40 frames of conditions a, b, c, a (rows i % 3 === condition)
    const rows = [0, 1, 2, 0].flatMap((condition, s) =>
      Array.from({ length: 40 }, (_, j) => 3 * (s * 40 + j) + condition),
    );
    const trace = traceOf(rows);
    // reset mode: each frame its own detected condition
    const result = conditionSwitches(trace, rows.length, calibrator, 'reset')!;
    const { names, detect } = calibrator.condition!;
    const perFrame = rows.map((_, frame) => names[detect(trace.features!.values, frame * WIDTH)]);
    const expected = perFrame.flatMap((condition, frame) =>
      frame === 0 || condition !== perFrame[frame - 1] ? [{ frame, tSeconds: frame / 30, condition }] : [],
    );
    expect(result.switches).toEqual(expected);
    expect(result.switchCount).toBe(expected.length);
    expect(result.lastCondition).toBe(perFrame[perFrame.length - 1]);
    // the segments' conditions, a detector mistake or two aside
    expect(result.switches.filter((s) => s.frame % 40 === 0).map((s) => s.condition)).toEqual(['a', 'b', 'c', 'a']);
    // only the frames asked for
    expect(conditionSwitches(trace, 40, calibrator, 'reset')!.switches.every((s) => s.frame < 40)).toBe(true);
  });

  it('lists the first MAX_CONDITION_SWITCHES of a flickering detector and counts them all', () => {
    const rows = Array.from({ length: 3 * MAX_CONDITION_SWITCHES }, (_, i) => i);
    const result = conditionSwitches(traceOf(rows), rows.length, calibrator, 'reset')!;
    expect(result.switchCount).toBeGreaterThan(MAX_CONDITION_SWITCHES);
    expect(result.switches).toHaveLength(MAX_CONDITION_SWITCHES);
  });

  it('is null for a calibrator that is not condition-aware, or a trace without features', () => {
    const temperature = compileCalibrator(CalibratorSpecSchema.parse({ method: 'temperature', temperature: 2 }));
    expect(conditionSwitches(traceOf([0, 1]), 2, temperature, 'continuous')).toBeNull();
    const withoutFeatures = { timestampsSeconds: new Float64Array(2) } as unknown as Trace;
    expect(conditionSwitches(withoutFeatures, 2, calibrator, 'continuous')).toBeNull();
    expect(conditionSwitches(traceOf([0, 1]), 2, null, 'continuous')).toBeNull();
  });
});
