/**
 * Identifying the second-order gate from a recording (src-shared/gate/identify-second-order.ts):
 * the app's own gate kernel run at known knobs over a seeded random input at 30 fps, and the
 * knobs read back from (u, g) alone, for ZOH and Tustin (plain and pre-warped), under-, critically
 * and over-damped, within 1e-6 relative on exact data and within 1 % with noise on g; and what it
 * refuses: a first-order gate (no second-order equivalent), an input that never changes, too few
 * frames, non-finite values.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import { runGate } from '../../src-shared/gate/gate-kernel';
import { createGateState } from '../../src-shared/gate/gate-state';
import { identifySecondOrder } from '../../src-shared/gate/identify-second-order';
import { seededRandom } from '../../src-shared/random';

const FPS = 30;
const FRAMES = 600;

/** The gate's g over a random input that holds each value for 1-8 frames (a shot-noise-like u*). */
function record(patch: Partial<GateSettings>, seed = 3): { u: Float64Array; g: Float64Array; settings: GateSettings } {
  const settings = { ...DEFAULT_GATE_SETTINGS, ...patch };
  const random = seededRandom(seed);
  const u = new Float64Array(FRAMES);
  for (let i = 0, hold = 0, value = 0.5; i < FRAMES; i++, hold--) {
    if (hold <= 0) {
      value = random();
      hold = 1 + Math.floor(random() * 8);
    }
    u[i] = value;
  }
  const g = new Float64Array(FRAMES);
  runGate(
    settings,
    { uRef: u, timestampsSeconds: Float64Array.from({ length: FRAMES }, (_, i) => i / FPS), nominalDtSeconds: 1 / FPS },
    0,
    FRAMES,
    createGateState(settings.g0),
    { g, v: new Float64Array(FRAMES) },
  );
  return { u, g, settings };
}

describe('identifySecondOrder', () => {
  const cases: Array<[string, Partial<GateSettings>]> = [
    ['ZOH, zeta 0.3', { discretization: 'zoh', zeta: 0.3, wnRadPerSec: 6 }],
    ['ZOH, zeta 0.7', { discretization: 'zoh', zeta: 0.7, wnRadPerSec: 6 }],
    ['ZOH, zeta 1 (critical)', { discretization: 'zoh', zeta: 1, wnRadPerSec: 6 }],
    ['ZOH, zeta 2.5, wn 20', { discretization: 'zoh', zeta: 2.5, wnRadPerSec: 20 }],
    ['Tustin, zeta 0.3', { discretization: 'tustin', zeta: 0.3, wnRadPerSec: 6 }],
    ['Tustin, zeta 1.8', { discretization: 'tustin', zeta: 1.8, wnRadPerSec: 12 }],
    [
      'Tustin pre-warped, zeta 0.5, wn 40',
      { discretization: 'tustin', tustinPrewarp: true, zeta: 0.5, wnRadPerSec: 40 },
    ],
  ];
  for (const [name, patch] of cases)
    it(`reads the knobs back from exact data: ${name}`, () => {
      const { u, g, settings } = record(patch);
      const found = identifySecondOrder(u, g, 1 / FPS, settings);
      expect(Math.abs(found.zeta / settings.zeta - 1)).toBeLessThan(1e-6);
      expect(Math.abs(found.wnRadPerSec / settings.wnRadPerSec - 1)).toBeLessThan(1e-6);
      expect(found.residualRms).toBeLessThan(1e-12);
      expect(found.equations).toBe(FRAMES - 2);
      if (settings.discretization === 'zoh') expect(Math.abs(found.coefficients[4])).toBeLessThan(1e-9);
    });

  it('within 1 % with noise of 1e-5 on g', () => {
    const { u, g, settings } = record({ discretization: 'zoh', zeta: 0.7, wnRadPerSec: 6 });
    const random = seededRandom(9);
    const noisy = g.map((value) => value + (random() - 0.5) * 2e-5);
    const found = identifySecondOrder(u, noisy, 1 / FPS, settings);
    expect(Math.abs(found.zeta / 0.7 - 1)).toBeLessThan(0.01);
    expect(Math.abs(found.wnRadPerSec / 6 - 1)).toBeLessThan(0.01);
    expect(found.residualRms).toBeGreaterThan(1e-7);
  });

  it('a first-order gate (ODE-Lite) is told apart from a second-order one, and said so', () => {
    const { u, g } = record({ variant: 'ema', discretization: 'zoh', wnRadPerSec: 6 });
    expect(() => identifySecondOrder(u, g, 1 / FPS, { discretization: 'zoh' })).toThrow(
      /no second-order model can be told apart in this recording: .* a lower-order gate \(ODE-Lite, Knob-IA\)/,
    );
  });

  it('refuses input that cannot identify anything, by what is wrong', () => {
    const { u, g } = record({ discretization: 'zoh' });
    const flat = new Float64Array(FRAMES).fill(0.4);
    expect(() => identifySecondOrder(flat, flat, 1 / FPS, { discretization: 'zoh' })).toThrow(
      /its input does not vary enough/,
    );
    expect(() => identifySecondOrder(u.subarray(0, 10), g.subarray(0, 10), 1 / FPS, { discretization: 'zoh' })).toThrow(
      /at least 22 frames, got 10/,
    );
    expect(() => identifySecondOrder(u, g.subarray(1), 1 / FPS, { discretization: 'zoh' })).toThrow(
      /600 inputs for 599/,
    );
    const holed = Float64Array.from(g);
    holed[77] = Number.NaN;
    expect(() => identifySecondOrder(u, holed, 1 / FPS, { discretization: 'zoh' })).toThrow(
      /frame 77: u or g is not finite/,
    );
    expect(() => identifySecondOrder(u, g, 0, { discretization: 'zoh' })).toThrow(/frame interval must be positive/);
  });
});
