/**
 * The condition-aware calibrator's hysteresis (condition-hysteresis.ts, issue 30): over a stream,
 * another condition is applied once it has been detected on H consecutive frames. Checked against
 * that definition written independently (a window over the detected sequence), and through every
 * the shared pieces the app applies it through: the recording's applied conditions and switches,
 * the replay's calibrated output (continuous mode carries it, reset mode judges each frame alone),
 * a stream of rows calibrated at once, the frame readout given a condition, and the recording's
 * rolling window. The step graph's copy: tests/integration/step-graph.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  createConditionHysteresis,
  nextAppliedCondition,
  resetConditionHysteresis,
} from '../../src-shared/calibrators/condition-hysteresis';
import {
  calibrateLogits,
  CalibratorSpecSchema,
  compileCalibrator,
} from '../../src-shared/calibrators/output-calibrator';
import { describeCalibrator } from '../../src-shared/calibrators';
import { fuseRowInto } from '../../src-shared/fusion/convex-fusion';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { seededRandom } from '../../src-shared/random';
import { appliedConditions, conditionSwitches } from '../../src-shared/trace/condition-switches';
import { frameReadout } from '../../src-shared/trace/frame-readout';
import { replay } from '../../src-shared/trace/replay';
import { rollingSeries } from '../../src-shared/trace/rolling-series';
import { Recording, ROLLING_WINDOW_FRAMES } from '../../src-main/core/recording/recording';
import { unknownProvenance } from '../../src-main/core/report/provenance';
import { syntheticTrace } from '../support/synthetic-trace';

/**
 * The definition, as a window: frame t applies the condition applied at t - 1, unless the H frames
 * ending at t were all detected as other than it, when it applies the one detected at t (the first
 * frame applies its own).
 */
function referenceApplied(detected: readonly number[], h: number): number[] {
  const applied: number[] = [];
  detected.forEach((d, t) => {
    if (t === 0) return applied.push(d);
    const previous = applied[t - 1]!;
    const window = detected.slice(Math.max(0, t - h + 1), t + 1);
    applied.push(window.length === h && window.every((w) => w !== previous) ? d : previous);
  });
  return applied;
}

function followed(detected: readonly number[], h: number): number[] {
  const state = createConditionHysteresis();
  return detected.map((d) => nextAppliedCondition(state, d, h));
}

describe('the hysteresis of the applied condition', () => {
  it('applies the detected condition once H frames in a row were detected as another, and ignores shorter runs', () => {
    const detected = [0, 0, 1, 0, 1, 1, 1, 1, 2, 1, 2, 2, 2, 0];
    expect(followed(detected, 1)).toEqual(detected);
    expect(followed(detected, 3)).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2]);
    // frames 4-8 read 1, 1, 1, 1, 2: five others in a row, the last one applied
    expect(followed(detected, 5)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2]);
    // two conditions that look alike, alternating, still move the stream off a third
    expect(followed([0, 1, 2, 1, 2, 2], 3)).toEqual([0, 0, 0, 1, 1, 1]);
  });

  it('equals the definition on seeded flickering sequences, for several H', () => {
    const random = seededRandom(11);
    for (const h of [1, 2, 3, 5, 8]) {
      for (let trial = 0; trial < 20; trial++) {
        // blocks of conditions with slips: a detector that is mostly right
        const detected: number[] = [];
        while (detected.length < 400) {
          const block = Math.floor(random() * 3);
          const length = 1 + Math.floor(random() * 12);
          for (let i = 0; i < length; i++) detected.push(random() < 0.8 ? block : Math.floor(random() * 3));
        }
        expect(followed(detected, h)).toEqual(referenceApplied(detected, h));
      }
    }
  });

  it('starts afresh after a reset: the next frame applies its own condition', () => {
    const state = createConditionHysteresis();
    [0, 0, 0].forEach((d) => nextAppliedCondition(state, d, 4));
    expect(nextAppliedCondition(state, 2, 4)).toBe(0);
    resetConditionHysteresis(state);
    expect(nextAppliedCondition(state, 2, 4)).toBe(2);
  });
});

/**
 * A condition-aware calibrator whose detector reads feature 0 (condition 0 below 0, 1 above) and
 * temperatures 0.5 and 3, over a synthetic stream whose feature 0 flickers.
 */
function flickeringStream(frames: number, hysteresisFrames: number | undefined) {
  const trace = syntheticTrace({ frames, classCount: 4, seed: 5 });
  const random = seededRandom(3);
  const values = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    const block = Math.floor(i / 40) % 2 === 0 ? -1 : 1;
    values[i] = random() < 0.25 ? -block : block;
  }
  const spec = CalibratorSpecSchema.parse({
    method: 'conditional',
    conditions: ['dim', 'bright'],
    temperatures: [0.5, 3],
    detector: { mean: [0], scale: [1], weights: [-1, 1], bias: [0, 0] },
    ...(hysteresisFrames === undefined ? {} : { hysteresisFrames }),
  });
  return {
    trace: { ...trace, features: { width: 1, values } },
    spec,
    detected: Array.from(values, (v) => (v > 0 ? 1 : 0)),
  };
}

describe('the hysteresis wherever the app applies a condition-aware calibrator', () => {
  const frames = 600;
  const { trace, spec, detected } = flickeringStream(frames, 6);
  const calibrator = compileCalibrator(spec);
  const expected = referenceApplied(detected, 6);

  it('is stated, and a spec written before it switches at every detection (1 frame)', () => {
    expect(describeCalibrator(spec)).toMatch(/hysteresis 6 frames$/);
    const { spec: older } = flickeringStream(10, undefined);
    expect(older.method === 'conditional' && older.hysteresisFrames).toBe(1);
    expect(describeCalibrator(older)).toMatch(/hysteresis 1 frame \(none\)$/);
    expect(() => CalibratorSpecSchema.parse({ ...spec, hysteresisFrames: 0 })).toThrow();
  });

  it("gives the recording's applied conditions and switches: through the hysteresis in continuous mode, each frame's own in reset mode", () => {
    expect(Array.from(appliedConditions(trace, frames, calibrator, 'continuous')!)).toEqual(expected);
    expect(Array.from(appliedConditions(trace, frames, calibrator, 'reset')!)).toEqual(detected);
    const switches = conditionSwitches(trace, frames, calibrator, 'continuous')!;
    const changes = expected.flatMap((c, t) => (t === 0 || c !== expected[t - 1] ? [t] : []));
    expect(switches.switches.map((s) => s.frame)).toEqual(changes);
    // the flicker is what the hysteresis calms: fewer switches than the detector's own
    expect(switches.switchCount).toBeLessThan(conditionSwitches(trace, frames, calibrator, 'reset')!.switchCount / 3);
    // and most of the 15 blocks of 40 frames are followed
    expect(switches.switchCount).toBeGreaterThan(frames / 40 / 2);
  });

  it("calibrates the replay's frames with the applied condition's temperature, as a stream of rows and the frame readout do", () => {
    const k = trace.classCount;
    for (const mode of ['continuous', 'reset'] as const) {
      const settings = { ...DEFAULT_GATE_SETTINGS, mode };
      const output = replay(trace, settings, { calibrator, keepFusedLogits: true });
      const conditions = mode === 'continuous' ? expected : detected;
      const fused = new Float64Array(frames * k);
      for (let i = 0; i < frames; i++) fuseRowInto(trace.zStatic, trace.zDyn, i * k, k, output.g[i]!, fused, i * k);
      const rows = mode === 'continuous' ? 'one stream' : 'each alone';
      const calibrated = calibrateLogits(spec, fused, k, trace.features, rows);
      for (let i = 0; i < frames; i++) {
        const t = [0.5, 3][conditions[i]!]!;
        const scaled = Array.from(fused.subarray(i * k, (i + 1) * k), (z) => z / t);
        const lse = Math.log(scaled.reduce((s, z) => s + Math.exp(z), 0));
        for (let c = 0; c < k; c++) {
          expect(output.fusedLogits![i * k + c]).toBeCloseTo(scaled[c]! - lse, 12);
          expect(calibrated[i * k + c]).toBeCloseTo(scaled[c]! - lse, 12);
        }
      }
      // the frame readout names the condition it is given, and calibrates with it
      const frame = conditions.findIndex((c, i) => c !== detected[i]);
      if (mode === 'reset') expect(frame).toBe(-1);
      else {
        const features = { values: trace.features.values, offset: frame };
        const readout = frameReadout(
          trace.zStatic,
          trace.zDyn,
          frame * k,
          k,
          output.g[frame]!,
          k,
          calibrator,
          features,
          conditions[frame],
        );
        expect(readout.calibratorCondition).toBe(spec.method === 'conditional' && spec.conditions[conditions[frame]!]);
        const top = readout.top[0]!;
        expect(top.fused).toBeCloseTo(Math.exp(output.fusedLogits![frame * k + top.classIndex]!), 12);
      }
    }
  });

  it("gives the recording's rolling figures the conditions the views' replay applies, in either mode", () => {
    const options = {
      id: 1,
      origin: 'loaded' as const,
      description: 'a trace',
      provenance: unknownProvenance('test', 'test'),
    };
    for (const mode of ['continuous', 'reset'] as const) {
      const settings = { ...DEFAULT_GATE_SETTINGS, mode };
      const output = replay(trace, settings);
      const recording = Recording.complete({ ...options, calibrator, gateMode: mode }, trace, output);
      const conditions = appliedConditions(trace, frames, calibrator, mode);
      const series = rollingSeries(trace, output.g, calibrator, ROLLING_WINDOW_FRAMES, [frames - 1], conditions);
      const figure = (name: string) => recording.rolling().find((m) => m.name === name)?.value;
      expect(figure('accuracy')).toBeCloseTo(series.accuracy[0]!, 12);
      expect(figure('mean confidence')).toBeCloseTo(series.confidence[0]!, 12);
      // and the hysteresis matters to them: judged frame by frame, the confidence is another
      const other = mode === 'continuous' ? 'reset' : 'continuous';
      const otherConditions = appliedConditions(trace, frames, calibrator, other);
      const otherSeries = rollingSeries(
        trace,
        output.g,
        calibrator,
        ROLLING_WINDOW_FRAMES,
        [frames - 1],
        otherConditions,
      );
      expect(Math.abs(figure('mean confidence')! - otherSeries.confidence[0]!)).toBeGreaterThan(1e-4);
    }
  });
});
