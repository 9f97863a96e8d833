/**
 * The frequency probe's lock-in estimator (src-shared/gate/lock-in.ts): a known gain and phase read
 * back from a noisy sinusoid within a few batch-means standard errors; the app's own gate kernel
 * driven by a sinusoidal u* measured equal to the discrete theory (frequency-response.ts, app
 * convention) at 0.3 to 9 Hz, falling with frequency; a clipped response flagged non-linear by its
 * harmonics and a linear one not; refusals by name.
 */
import { describe, expect, it } from 'vitest';
import { frequencyResponseAt } from '../../src-shared/gate/frequency-response';
import { runGate } from '../../src-shared/gate/gate-kernel';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import { createGateState } from '../../src-shared/gate/gate-state';
import { lockIn } from '../../src-shared/gate/lock-in';
import { seededRandom } from '../../src-shared/random';

const RATE = 30;
const sinusoid = (count: number, f: number, amplitude: number, phase: number, offset = 0.5) =>
  Float64Array.from({ length: count }, (_, n) => offset + amplitude * Math.cos((2 * Math.PI * f * n) / RATE + phase));

function gateOutput(settings: GateSettings, u: Float64Array): Float64Array {
  const g = new Float64Array(u.length);
  runGate(
    settings,
    { uRef: u, timestampsSeconds: Float64Array.from(u, (_, i) => i / RATE), nominalDtSeconds: 1 / RATE },
    0,
    u.length,
    createGateState(settings.g0),
    { g, v: new Float64Array(u.length) },
  );
  return g;
}

describe('lockIn', () => {
  it('reads back a known gain and phase from a noisy sinusoid, within its standard errors', () => {
    const f = 1.5;
    const u = sinusoid(1200, f, 0.3, 0);
    const random = seededRandom(4);
    const g = sinusoid(1200, f, 0.3 * 0.62, -0.9).map((value) => value + (random() - 0.5) * 0.05);
    const result = lockIn(u, g, { rateHz: RATE, frequencyHz: f });
    expect(Math.abs(result.magnitude - 0.62)).toBeLessThan(4 * result.magnitudeStandardError);
    expect(Math.abs(result.phaseDeg - (-0.9 * 180) / Math.PI)).toBeLessThan(4 * result.phaseDegStandardError);
    expect(result.magnitudeStandardError).toBeGreaterThan(0);
    expect(result.periods).toBe(56); // 8 batches of 7 whole periods: the last 56 of the 60
    expect(result.nonlinear).toBe(false);
  });

  it("the app's gate measures as the discrete theory says, and falls with frequency", () => {
    const settings: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.7, wnRadPerSec: 6 };
    const magnitudes: number[] = [];
    for (const f of [0.3, 1, 2, 4, 9]) {
      const u = sinusoid(3000, f, 0.25, 0.4);
      // the first 10 s are the transient; the probe analyses what follows
      const g = gateOutput(settings, u).subarray(300);
      const measured = lockIn(u.subarray(300), g, { rateHz: RATE, frequencyHz: f });
      const theory = frequencyResponseAt(settings, 2 * Math.PI * f, { system: 'discrete', hSeconds: 1 / RATE });
      expect(measured.magnitudeDb, `${f} Hz`).toBeCloseTo(theory.magnitudeDb, 6);
      const phaseDifference = ((measured.phaseDeg - theory.phaseDeg + 540) % 360) - 180;
      expect(Math.abs(phaseDifference), `${f} Hz`).toBeLessThan(1e-5);
      expect(measured.nonlinear).toBe(false);
      magnitudes.push(measured.magnitude);
    }
    for (let i = 1; i < magnitudes.length; i++) expect(magnitudes[i]).toBeLessThan(magnitudes[i - 1]!);
  });

  it('flags a clipped response as non-linear by its harmonics', () => {
    const f = 1;
    const u = sinusoid(900, f, 0.45, 0);
    const clipped = u.map((value) => Math.min(0.8, Math.max(0.2, value)));
    const result = lockIn(u, clipped, { rateHz: RATE, frequencyHz: f });
    expect(result.totalHarmonicDistortion).toBeGreaterThan(0.05);
    expect(result.nonlinear).toBe(true);
    expect(lockIn(u, u, { rateHz: RATE, frequencyHz: f }).totalHarmonicDistortion).toBeLessThan(1e-12);
  });

  it('refuses what it cannot measure, by name', () => {
    const u = sinusoid(600, 1, 0.3, 0);
    expect(() => lockIn(u, u, { rateHz: RATE, frequencyHz: 15 })).toThrow(/between 0 and Nyquist \(15 Hz\)/);
    expect(() => lockIn(u.subarray(0, 100), u.subarray(0, 100), { rateHz: RATE, frequencyHz: 0.5 })).toThrow(
      /100 samples hold 1 batches of 1 period\(s\) at 0.5 Hz; 8 are needed/,
    );
    expect(() => lockIn(u, u.subarray(1), { rateHz: RATE, frequencyHz: 1 })).toThrow(/600 inputs for 599/);
    const flat = new Float64Array(600).fill(0.5);
    expect(() => lockIn(flat, flat, { rateHz: RATE, frequencyHz: 1 })).toThrow(/no component at 1 Hz/);
    const holed = Float64Array.from(u);
    holed[9] = Number.NaN;
    expect(() => lockIn(u, holed, { rateHz: RATE, frequencyHz: 1 })).toThrow(/sample 9 is not finite/);
  });
});
