import { z } from 'zod';
import { numberInAcceptedRange, WN_RANGE_RAD_PER_SEC, ZETA_RANGE, type AcceptedRange } from '../gate/accepted-ranges';
import type { GateSettings } from '../gate/gate-settings';

/**
 * The desk's knob ranges: the travel of the zeta and wn knobs (KnobsPanel) and the bounds the
 * desk's tune request asks the tuner to stay inside (tune.run `within`), one table for both, so the
 * tuner never proposes a setting a knob cannot show. Narrower than what the gate accepts
 * (accepted-ranges.ts): the CLI and the API may go further.
 */
export interface KnobRange {
  min: number;
  max: number;
}

export const DESK_KNOB_RANGES: Readonly<{ zeta: KnobRange; wnRadPerSec: KnobRange }> = Object.freeze({
  zeta: Object.freeze({ min: 0.05, max: 3 }),
  wnRadPerSec: Object.freeze({ min: 0.1, max: 100 }),
});

export type KnobRanges = typeof DESK_KNOB_RANGES;

const bounds = (field: string, accepted: AcceptedRange) =>
  z
    .strictObject({
      min: numberInAcceptedRange(`${field} min`, accepted),
      max: numberInAcceptedRange(`${field} max`, accepted),
    })
    .refine((r) => r.min <= r.max, { message: 'min must not exceed max' });

/** Bounds a tune stays inside: every setting it tries and reports has zeta and wn within them. */
export const TuningBoundsSchema = z.strictObject({
  zeta: bounds('zeta', ZETA_RANGE),
  wnRadPerSec: bounds('wn', WN_RANGE_RAD_PER_SEC),
});
export type TuningBounds = z.infer<typeof TuningBoundsSchema>;

/** Why a setting lies outside the ranges (the first knob that does, in words), or null when inside. */
export function outsideKnobRanges(
  settings: Pick<GateSettings, 'zeta' | 'wnRadPerSec'>,
  ranges: TuningBounds = DESK_KNOB_RANGES,
): string | null {
  const { zeta, wnRadPerSec } = ranges;
  if (!(settings.zeta >= zeta.min && settings.zeta <= zeta.max))
    return `ζ ${settings.zeta} is outside the knob's range [${zeta.min}, ${zeta.max}]`;
  if (!(settings.wnRadPerSec >= wnRadPerSec.min && settings.wnRadPerSec <= wnRadPerSec.max))
    return `ωn ${settings.wnRadPerSec} rad/s is outside the knob's range [${wnRadPerSec.min}, ${wnRadPerSec.max}] rad/s`;
  return null;
}
