/**
 * The step probe's statistics (src-shared/probes/step-probe-summary.ts) on synthetic realisations: the
 * app's gate kernel driven by a noisy u* that steps down at frame 300 (32 seeded realisations).
 * The normalised mean response follows the discrete prediction of the knobs that made it (inside
 * its bootstrap band at most frames, step figures close), and not that of other knobs; quantiles
 * order; refusals by name. (Seeded: 98 % of the frames inside, 100 % of the transient; other
 * knobs 12-14 % of the transient.)
 */
import { describe, expect, it } from 'vitest';
import { runGate } from '../../src-shared/gate/gate-kernel';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import { createGateState } from '../../src-shared/gate/gate-state';
import { summariseStepProbe } from '../../src-shared/probes/step-probe-summary';
import { seededRandom } from '../../src-shared/random';

const RATE = 30;
const FRAMES = 600;
const STEP = 300;

function realisations(
  settings: GateSettings,
  count = 32,
  firstSeed = 100,
): { g: Float64Array[]; uStar: Float64Array[] } {
  const g: Float64Array[] = [];
  const uStar: Float64Array[] = [];
  for (let r = 0; r < count; r++) {
    const random = seededRandom(firstSeed + r);
    const u = Float64Array.from({ length: FRAMES }, (_, t) => (t < STEP ? 0.8 : 0.35) + (random() - 0.5) * 0.3);
    const out = new Float64Array(FRAMES);
    runGate(
      settings,
      { uRef: u, timestampsSeconds: Float64Array.from(u, (_, i) => i / RATE), nominalDtSeconds: 1 / RATE },
      0,
      FRAMES,
      createGateState(0.8),
      { g: out, v: new Float64Array(FRAMES) },
    );
    g.push(out);
    uStar.push(u);
  }
  return { g, uStar };
}

describe('summariseStepProbe', () => {
  const made: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.3, wnRadPerSec: 6 };
  const data = realisations(made);

  it('the mean response follows the prediction of the knobs that made it', () => {
    const summary = summariseStepProbe({ ...data, stepFrame: STEP, hSeconds: 1 / RATE }, made, { replicates: 400 });
    expect(summary.insideFraction).toBeGreaterThan(0.9);
    expect(summary.insideFractionTransient).toBeGreaterThan(0.9);
    expect(summary.uAfter).toBeLessThan(summary.uBefore);
    expect(Math.abs(summary.measured.overshootPercent - summary.predictedInfo.overshootPercent)).toBeLessThan(5);
    expect(summary.measured.settlingTimeSeconds).not.toBeNull();
    expect(Math.abs(summary.measured.peakTimeSeconds - summary.predictedInfo.peakTimeSeconds)).toBeLessThan(0.1);
    for (let t = 0; t < FRAMES; t++) {
      expect(summary.q25G[t]).toBeLessThanOrEqual(summary.medianG[t]!);
      expect(summary.medianG[t]).toBeLessThanOrEqual(summary.q75G[t]!);
      expect(summary.bandLo[t]).toBeLessThanOrEqual(summary.bandHi[t]!);
    }
    expect(summary.predicted[STEP - 1]).toBe(0);
  });

  it('and not the prediction of other knobs', () => {
    for (const other of [
      { ...made, zeta: 1 },
      { ...made, wnRadPerSec: 3 },
    ]) {
      const summary = summariseStepProbe({ ...data, stepFrame: STEP, hSeconds: 1 / RATE }, other, { replicates: 400 });
      // the settled frames agree under any knobs; the transient tells them apart
      expect(summary.insideFractionTransient, JSON.stringify(other)).toBeLessThan(0.5);
    }
  });

  it('the simultaneous band holds the whole response at once; the pointwise one leaves about 5 % of frames', () => {
    // 20 independent probes of the same gate: the studentised max-|t| band (the default) keeps 95 % of
    // the frames inside nearly always; the pointwise band's share straddles 95 % by construction.
    let simultaneousMet = 0;
    let pointwiseShare = 0;
    const probes = 20;
    for (let k = 0; k < probes; k++) {
      const probe = { ...realisations(made, 32, 1000 + 64 * k), stepFrame: STEP, hSeconds: 1 / RATE };
      const simultaneous = summariseStepProbe(probe, made, { replicates: 300, seed: k });
      expect(simultaneous.bootstrap.band).toBe('simultaneous');
      expect(simultaneous.bootstrap.criticalValue).toBeGreaterThan(1.96);
      if (simultaneous.insideFraction >= 0.95) simultaneousMet++;
      const pointwise = summariseStepProbe(probe, made, { replicates: 300, seed: k, band: 'pointwise' });
      expect(pointwise.bootstrap.criticalValue).toBeNull();
      pointwiseShare += pointwise.insideFraction / probes;
    }
    expect(simultaneousMet).toBeGreaterThanOrEqual(18);
    expect(pointwiseShare).toBeGreaterThan(0.8);
    expect(pointwiseShare).toBeLessThan(0.99);
  });

  it('two realisations, one of which does not step: the bootstrap draws again instead of failing', () => {
    const flat = new Float64Array(FRAMES).fill(0.6);
    const summary = summariseStepProbe(
      { g: [data.g[0]!, flat], uStar: [data.uStar[0]!, flat], stepFrame: STEP, hSeconds: 1 / RATE },
      made,
      { replicates: 50 },
    );
    expect(summary.realisations).toBe(2);
    expect(Number.isFinite(summary.bandLo[STEP + 10]!)).toBe(true);
  });

  it('refuses what it cannot summarise, by name', () => {
    const base = { stepFrame: STEP, hSeconds: 1 / RATE };
    expect(() => summariseStepProbe({ g: [data.g[0]!], uStar: [data.uStar[0]!], ...base }, made)).toThrow(
      /at least 2 realisations/,
    );
    expect(() =>
      summariseStepProbe({ g: [data.g[0]!, data.g[1]!.subarray(1)], uStar: data.uStar.slice(0, 2), ...base }, made),
    ).toThrow(/the same frames/);
    expect(() => summariseStepProbe({ ...data, stepFrame: 0, hSeconds: 1 / RATE }, made)).toThrow(/step frame 0/);
    const flat = data.uStar.map(() => new Float64Array(FRAMES).fill(0.5));
    expect(() => summariseStepProbe({ g: data.g, uStar: flat, ...base }, made)).toThrow(/u\* does not step/);
  });
});
