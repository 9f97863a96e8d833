/** Property tests of the gate (fast-check, seeded so a failure is reproducible). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GATE_SETTINGS,
  GATE_DISCRETIZATIONS,
  GATE_VARIANTS,
  clippingBound,
  continuousStepAt,
  createGateState,
  frequencyResponseAt,
  runGate,
  stepSeries,
  type GateSettings,
} from '../../src-shared/gate';

const FC = { seed: 20261130, numRuns: 200 };

function run(settings: GateSettings, u: Float64Array, timestamps: Float64Array, nominalDt: number, g0 = settings.g0) {
  const g = new Float64Array(u.length);
  const v = new Float64Array(u.length);
  const state = createGateState(g0);
  runGate(settings, { uRef: u, timestampsSeconds: timestamps, nominalDtSeconds: nominalDt }, 0, u.length, state, {
    g,
    v,
  });
  return { g, v, state };
}

const regularTimes = (n: number, h: number): Float64Array => Float64Array.from({ length: n }, (_, i) => i * h);

describe('DC gain 1', () => {
  for (const variant of GATE_VARIANTS) {
    for (const discretization of GATE_DISCRETIZATIONS) {
      it(`${variant} / ${discretization}: a constant input is reached and |G(0)| = 1`, () => {
        fc.assert(
          fc.property(
            fc.double({ min: 0.2, max: 3, noNaN: true }),
            fc.double({ min: 1, max: 40, noNaN: true }),
            fc.double({ min: 0, max: 1, noNaN: true }),
            (zeta, wn, u) => {
              const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, variant, discretization, zeta, wnRadPerSec: wn };
              const h = 1 / 30;
              // long enough for the slowest pole to decay below 1e-9
              const slowest = zeta >= 1 ? wn * (zeta - Math.sqrt(zeta * zeta - 1)) : zeta * wn;
              const frames = Math.ceil(25 / (slowest * h)) + 10;
              const { g } = run(s, new Float64Array(frames).fill(u), regularTimes(frames, h), h);
              expect(Math.abs(g[frames - 1]! - u)).toBeLessThan(1e-9);
              const dc = frequencyResponseAt(s, 1e-9, { system: 'discrete', hSeconds: h });
              expect(Math.abs(dc.magnitudeDb)).toBeLessThan(1e-9);
            },
          ),
          { ...FC, numRuns: 40 },
        );
      });
    }
  }
});

describe('ZOH equals the continuous step at frame instants', () => {
  it('for random zeta, wn and dt (app convention: frame n is the continuous step at (n + 1) h)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        fc.double({ min: 0.1, max: 200, noNaN: true }),
        fc.double({ min: 1e-3, max: 0.5, noNaN: true }),
        (zeta, wn, h) => {
          const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec: wn };
          const series = stepSeries(s, { system: 'discrete', hSeconds: h, frames: 60 });
          for (let n = 0; n < 60; n++) {
            expect(Math.abs(series.g[n]! - continuousStepAt(s, (n + 1) * h))).toBeLessThan(1e-11);
          }
        },
      ),
      FC,
    );
  });
  it('with irregular intervals too', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        fc.double({ min: 0.1, max: 60, noNaN: true }),
        fc.array(fc.double({ min: 1e-3, max: 0.2, noNaN: true }), { minLength: 2, maxLength: 80 }),
        (zeta, wn, intervals) => {
          const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec: wn, g0: 0 };
          const t = new Float64Array(intervals.length);
          let now = 0;
          for (let i = 0; i < intervals.length; i++) {
            now += intervals[i]!;
            t[i] = now;
          }
          // the first frame's interval is the nominal one: make it intervals[0] so t[0] is its end
          const { g } = run(s, new Float64Array(intervals.length).fill(1), t, intervals[0]!);
          for (let n = 0; n < intervals.length; n++) {
            expect(Math.abs(g[n]! - continuousStepAt(s, t[n]!))).toBeLessThan(1e-10);
          }
        },
      ),
      FC,
    );
  });
});

describe('bounded output', () => {
  it('for zeta >= 1 and u* in [0, 1] from rest, g stays in [0, 1] (ZOH, any variant)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 20, noNaN: true }),
        fc.double({ min: 0.1, max: 300, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 200 }),
        fc.constantFrom(...GATE_VARIANTS),
        (zeta, wn, g0, inputs, variant) => {
          const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, variant, zeta, wnRadPerSec: wn, g0 };
          const h = 1 / 30;
          const { g } = run(s, Float64Array.from(inputs), regularTimes(inputs.length, h), h);
          for (const value of g) {
            expect(value).toBeGreaterThanOrEqual(-1e-12);
            expect(value).toBeLessThanOrEqual(1 + 1e-12);
          }
        },
      ),
      FC,
    );
  });
  it('Tustin keeps the bound while both bilinear poles stay positive ((zeta + mu/wn) wn h < 2)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 5, noNaN: true }),
        fc.double({ min: 0.1, max: 30, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (zeta, wn, inputs) => {
          const h = 1 / 30;
          fc.pre((zeta + Math.sqrt(zeta * zeta - 1)) * wn * h < 2);
          const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, discretization: 'tustin', zeta, wnRadPerSec: wn, g0: 0 };
          const { g } = run(s, Float64Array.from(inputs), regularTimes(inputs.length, h), h);
          for (const value of g) {
            expect(value).toBeGreaterThanOrEqual(-1e-12);
            expect(value).toBeLessThanOrEqual(1 + 1e-12);
          }
        },
      ),
      FC,
    );
  });
  it('for zeta < 1 the excursion never exceeds K/(1-K) and bang-bang switching at the peaks approaches it', () => {
    for (const zeta of [0.3, 0.5, 0.7, 0.9]) {
      const wn = 6;
      const h = 1e-3;
      const halfPeriodFrames = Math.round(Math.PI / (wn * Math.sqrt(1 - zeta * zeta)) / h);
      const frames = halfPeriodFrames * 60;
      const u = new Float64Array(frames);
      for (let i = 0; i < frames; i++) u[i] = Math.floor(i / halfPeriodFrames) % 2 === 0 ? 1 : 0;
      const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec: wn, g0: 0 };
      const { g } = run(s, u, regularTimes(frames, h), h);
      let worst = 0;
      for (const value of g) worst = Math.max(worst, value - 1, -value);
      const bound = clippingBound(zeta);
      expect(worst).toBeLessThanOrEqual(bound + 1e-12);
      expect(worst).toBeGreaterThan(0.99 * bound);
    }
  });
});

describe('bumpless retuning', () => {
  it('changing zeta, wn, variant or discretisation mid-stream keeps g and v continuous', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        fc.double({ min: 0.5, max: 30, noNaN: true }),
        fc.constantFrom(...GATE_VARIANTS),
        fc.constantFrom(...GATE_DISCRETIZATIONS),
        (zeta, wn, variant, discretization) => {
          const h = 1 / 30;
          const frames = 40;
          const u = Float64Array.from({ length: 2 * frames }, (_, i) => (i < 10 ? 0.2 : 0.9));
          const t = regularTimes(2 * frames, h);
          const state = createGateState(0.5);
          const g = new Float64Array(2 * frames);
          const v = new Float64Array(2 * frames);
          const input = { uRef: u, timestampsSeconds: t, nominalDtSeconds: h };
          runGate(DEFAULT_GATE_SETTINGS, input, 0, frames, state, { g, v });
          const before = { g: state[0]!, v: state[1]! };
          const retuned: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec: wn, variant, discretization };
          // the state is untouched by retuning itself ...
          expect(state[0]).toBe(before.g);
          expect(state[1]).toBe(before.v);
          runGate(retuned, input, frames, 2 * frames, state, { g, v });
          // ... and the first retuned frame moves g by at most what one frame of the new dynamics can
          const jump = Math.abs(g[frames]! - g[frames - 1]!);
          if (variant !== 'instant')
            expect(jump).toBeLessThanOrEqual(Math.abs(before.v) * h * 4 + wn * wn * h * h + wn * h);
        },
      ),
      FC,
    );
  });
});

describe('degenerate input', () => {
  const h = 1 / 30;
  it('NaN u* is a typed error naming the frame; frames before it are kept', () => {
    const u = Float64Array.of(0.5, 0.6, Number.NaN, 0.7);
    const g = new Float64Array(4).fill(-7);
    const state = createGateState(0.5);
    expect(() =>
      runGate(
        DEFAULT_GATE_SETTINGS,
        { uRef: u, timestampsSeconds: regularTimes(4, h), nominalDtSeconds: h },
        0,
        4,
        state,
        { g, v: new Float64Array(g.length) },
      ),
    ).toThrow(/frame 2 is NaN/);
    expect(g[1]).not.toBe(-7);
    expect(g[2]).toBe(-7);
  });
  it('u* outside [0, 1] is clamped and counted, never NaN', () => {
    const u = Float64Array.of(-3, 0.5, 7, Infinity, -Infinity);
    const g = new Float64Array(5);
    const clamped = runGate(
      DEFAULT_GATE_SETTINGS,
      { uRef: u, timestampsSeconds: regularTimes(5, h), nominalDtSeconds: h },
      0,
      5,
      createGateState(0.5),
      { g, v: new Float64Array(g.length) },
    );
    expect(clamped).toBe(4);
    for (const value of g) expect(Number.isFinite(value)).toBe(true);
  });
  it('non-increasing or non-finite timestamps are typed errors', () => {
    for (const t of [
      Float64Array.of(0, 0.1, 0.1),
      Float64Array.of(0, 0.1, 0.05),
      Float64Array.of(0, 0.1, Infinity),
      Float64Array.of(0, Number.NaN, 1),
    ]) {
      expect(() =>
        runGate(
          DEFAULT_GATE_SETTINGS,
          { uRef: new Float64Array(3).fill(0.5), timestampsSeconds: t, nominalDtSeconds: h },
          0,
          3,
          createGateState(0.5),
          {
            g: new Float64Array(3),
            v: new Float64Array(3),
          },
        ),
      ).toThrow(/interval dt/);
    }
  });
  it('extreme but valid knobs give finite output (zeta 100, wn 1000; zeta 0.001, wn 1000)', () => {
    for (const [zeta, wn] of [
      [100, 1000],
      [1e-3, 1000],
      [1, 1000],
      [100, 1e-3],
    ] as const) {
      for (const discretization of GATE_DISCRETIZATIONS) {
        const s: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec: wn, discretization };
        const { g, v } = run(
          s,
          Float64Array.from({ length: 200 }, (_, i) => (i % 7) / 6),
          regularTimes(200, h),
          h,
        );
        for (let i = 0; i < 200; i++) {
          expect(Number.isFinite(g[i])).toBe(true);
          expect(Number.isFinite(v[i])).toBe(true);
        }
      }
    }
  });
});

describe('reset mode', () => {
  it('g = g0 + S(tau) (u* - g0) with the exact step response, independent of timestamps and history', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 3, noNaN: true }),
        fc.double({ min: 0.5, max: 30, noNaN: true }),
        fc.double({ min: 0.01, max: 2, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (zeta, wn, tau, g0, inputs) => {
          const s: GateSettings = {
            ...DEFAULT_GATE_SETTINGS,
            mode: 'reset',
            zeta,
            wnRadPerSec: wn,
            tauSeconds: tau,
            g0,
          };
          const { g } = run(s, Float64Array.from(inputs), regularTimes(inputs.length, 1 / 30), 1 / 30);
          const step = continuousStepAt(s, tau);
          inputs.forEach((u, i) => expect(Math.abs(g[i]! - (g0 + step * (u - g0)))).toBeLessThan(1e-12));
        },
      ),
      FC,
    );
  });
});
