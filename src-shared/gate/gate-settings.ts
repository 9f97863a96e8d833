import { z } from 'zod';
import { parseWithSchema } from '../zod-issues';
import { numberInAcceptedRange, TAU_RANGE_SECONDS, WN_RANGE_RAD_PER_SEC, ZETA_RANGE } from './accepted-ranges';

/**
 * Gate settings (ARCHITECTURE.md "The gate").
 *
 * Accepted ranges (accepted-ranges.ts): zeta in [1e-3, 100], wn in [1e-3, 1000] rad/s, tau in
 * [1e-3, 3600] s, g0 in [0, 1]. Outside them the response figures stop meaning anything and their
 * searches stop being bounded, so settings are refused with a typed error naming the field and its
 * range, wherever they enter (all of them go through this schema).
 */
export const GATE_VARIANTS = ['instant', 'ema', 'second-order'] as const;
export type GateVariant = (typeof GATE_VARIANTS)[number];

/** Paper names of the variants, for labels. */
export const GATE_VARIANT_LABELS: Record<GateVariant, string> = {
  instant: 'Knob-IA',
  ema: 'ODE-Lite',
  'second-order': 'Knob-ODE',
};

export const GATE_DISCRETIZATIONS = ['zoh', 'tustin'] as const;
export type GateDiscretization = (typeof GATE_DISCRETIZATIONS)[number];

export const GATE_MODES = ['continuous', 'reset'] as const;
export type GateMode = (typeof GATE_MODES)[number];

export const GateSettingsSchema = z.strictObject({
  variant: z.enum(GATE_VARIANTS),
  discretization: z.enum(GATE_DISCRETIZATIONS),
  /** Tustin only: pre-warp the bilinear map so the response is exact at wn (needs wn dt < pi). */
  tustinPrewarp: z.boolean(),
  mode: z.enum(GATE_MODES),
  zeta: numberInAcceptedRange('zeta', ZETA_RANGE),
  wnRadPerSec: numberInAcceptedRange('wn', WN_RANGE_RAD_PER_SEC),
  /** Reset mode: horizon of constant input after which the gate is read. */
  tauSeconds: numberInAcceptedRange('tau', TAU_RANGE_SECONDS),
  /** Rest value: the state at stream start (continuous) or before every sample (reset). */
  g0: z.number().gte(0).lte(1),
});

export type GateSettings = z.infer<typeof GateSettingsSchema>;

/**
 * Defaults: zeta 0.7 and wn 6 rad/s (about 5 % overshoot, 1 s settling: the reference case of
 * tests/fixtures/reference/dynamics.md); ZOH because it is exact at frame instants for any dt; reset-mode
 * horizon 0.5 s, long enough that zeta and wn visibly shape the reading.
 */
export const DEFAULT_GATE_SETTINGS: GateSettings = Object.freeze({
  variant: 'second-order',
  discretization: 'zoh',
  tustinPrewarp: false,
  mode: 'continuous',
  zeta: 0.7,
  wnRadPerSec: 6,
  tauSeconds: 0.5,
  g0: 0.5,
});

/** Validates untrusted settings; throws INVALID_SETTINGS naming every offending field. */
/** Whether two settings are the same knobs, field for field (settings parsed by one schema share their key order). */
export function sameGateSettings(a: GateSettings, b: GateSettings): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

export function parseGateSettings(raw: unknown): GateSettings {
  return parseWithSchema(GateSettingsSchema, raw, {
    code: 'INVALID_SETTINGS',
    what: 'Invalid gate settings',
    root: '(settings)',
  });
}
