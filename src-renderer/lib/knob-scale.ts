import { DESK_KNOB_RANGES } from '../../src-shared/tuning/knob-ranges';

/**
 * Mapping between a knob's value and its travel position p in [0, 1] (linear or logarithmic), and
 * the step sizes of keyboard and wheel input, expressed in travel so a log knob steps by a constant
 * ratio. Pure; the knob component only draws and forwards input.
 */
export interface KnobScale {
  min: number;
  max: number;
  logarithmic: boolean;
  /** Travel per arrow key / wheel notch; Shift uses fine, PageUp/PageDown coarse. */
  stepTravel: number;
  fineTravel: number;
  coarseTravel: number;
}

export function valueToTravel(scale: KnobScale, value: number): number {
  const { min, max } = scale;
  const clamped = Math.min(max, Math.max(min, value));
  const p = scale.logarithmic ? Math.log(clamped / min) / Math.log(max / min) : (clamped - min) / (max - min);
  return Math.min(1, Math.max(0, p));
}

export function travelToValue(scale: KnobScale, travel: number): number {
  const p = Math.min(1, Math.max(0, travel));
  const { min, max } = scale;
  return scale.logarithmic ? min * (max / min) ** p : min + p * (max - min);
}

/** Rounds to a few significant digits so keyboard steps land on readable values. */
export function roundForDisplay(value: number, significantDigits = 4): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const factor = 10 ** (significantDigits - 1 - magnitude);
  return Math.round(value * factor) / factor;
}

export function stepValue(scale: KnobScale, value: number, travelDelta: number): number {
  return roundForDisplay(travelToValue(scale, valueToTravel(scale, value) + travelDelta));
}

/** Parses typed entry; null when it is not a number inside the knob's range. */
export function parseTypedValue(scale: KnobScale, text: string): number | null {
  const value = Number(text.trim().replace(',', '.'));
  if (!Number.isFinite(value) || text.trim() === '') return null;
  if (value < scale.min || value > scale.max) return null;
  return value;
}

/**
 * The desk's knobs' scales, on screen and from hardware alike (the hardware knobs move through
 * them, hardware/bound-control.ts): their travel is the desk's knob ranges (knob-ranges.ts: the
 * tuner stays inside them too). wn on a log scale, 0.1 to 100 rad/s: an arrow key is a factor of
 * 10^(3 x 0.01) = 1.07. tau has no on-screen knob; from hardware it travels logarithmically over
 * the horizons an operator uses, a frame at 120 fps to ten minutes.
 */
const zeta = DESK_KNOB_RANGES.zeta;
export const DESK_KNOB_SCALES: Readonly<Record<'zeta' | 'wnRadPerSec' | 'tauSeconds', KnobScale>> = Object.freeze({
  zeta: {
    ...zeta,
    logarithmic: false,
    stepTravel: 0.01 / (zeta.max - zeta.min),
    fineTravel: 0.001 / (zeta.max - zeta.min),
    coarseTravel: 0.1 / (zeta.max - zeta.min),
  },
  wnRadPerSec: {
    ...DESK_KNOB_RANGES.wnRadPerSec,
    logarithmic: true,
    stepTravel: 0.01,
    fineTravel: 0.001,
    coarseTravel: 0.1,
  },
  tauSeconds: { min: 0.01, max: 600, logarithmic: true, stepTravel: 0.01, fineTravel: 0.001, coarseTravel: 0.1 },
});
