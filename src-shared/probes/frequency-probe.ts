import { z } from 'zod';
import { CORRUPTION_NAMES } from '../corruptions/corruption-table';
import type { CorruptionSchedule } from '../corruptions/schedule';
import { KnobError } from '../errors';
import { frequencyResponseAt, frequencyResponseSeries, type FrequencySeries } from '../gate/frequency-response';
import type { GateSettings } from '../gate/gate-settings';
import { lockIn, type LockInResult } from '../gate/lock-in';
import { discreteResponseMetrics } from '../gate/response-metrics';
import { replay } from '../trace/replay';
import type { Trace } from '../trace/trace';
import { parseWithSchema } from '../zod-issues';
import { FrameRateHzSchema } from '../gate/accepted-ranges';

/**
 * The frequency probe (issue 17): for each test frequency a stream whose severity is modulated
 * sinusoidally, s[n] = mean + amplitude sin(2 pi f n / rate) (rounded to integer severities by the
 * schedule), recorded once through the model. At any knobs the gate is replayed over each stream
 * and its response to u* is measured by lock-in (lock-in.ts) over the analysis window, whole periods
 * at the end of the stream, after the settling allowance: H = Z_g / Z_u* with batch-means standard
 * errors, in dB relative to DC (the gate's DC gain is 1), over the discrete theory of the knobs.
 *
 * Frequencies are rate / k for whole numbers of frames per period k, log-spaced from the longest
 * period down to 3 frames (a third of the frame rate), so every period holds whole frames and the
 * lock-in needs no interpolation. g is measured as the fusion reads it, clamp(g, 0, 1): a window
 * where g left [0, 1] is flagged `clipped` (the response there is not the linear gate's), and the
 * lock-in's harmonic distortion is reported beside it.
 */
export const FrequencyProbePlanSchema = z.strictObject({
  corruption: z.enum(CORRUPTION_NAMES).default('shot_noise'),
  meanSeverity: z.number().min(0).max(5).default(3),
  amplitude: z.number().gt(0).max(2.5).default(2),
  /** How many frequencies (default 8). */
  frequencies: z.number().int().min(2).max(32).default(8),
  /** The longest period in frames (default 120: 0.25 Hz at 30 fps). */
  longestPeriodFrames: z.number().int().min(4).max(10_000).default(120),
  frameRateHz: FrameRateHzSchema.default(30),
  /** Frames recorded before the analysis window, for the gate's transient (default 300). */
  settleFrames: z.number().int().min(0).max(100_000).default(300),
  /** Batch-means batches of the lock-in (default 8). */
  batches: z.number().int().min(2).max(64).default(8),
  /** Each batch spans at least this many frames (whole periods; default 64). */
  minBatchFrames: z.number().int().min(1).max(100_000).default(64),
  seed: z.number().int().min(0).max(0xffffffff).default(0),
});
export type FrequencyProbePlanInput = z.input<typeof FrequencyProbePlanSchema>;
export type FrequencyProbePlan = z.output<typeof FrequencyProbePlanSchema>;

export function parseFrequencyProbePlan(raw: unknown): FrequencyProbePlan {
  const plan = parseWithSchema(FrequencyProbePlanSchema, raw, {
    code: 'INVALID_SETTINGS',
    what: 'Invalid frequency probe',
    root: '(frequency probe)',
  });
  if (plan.meanSeverity - plan.amplitude < 0 || plan.meanSeverity + plan.amplitude > 5)
    throw new KnobError(
      'INVALID_SETTINGS',
      `Invalid frequency probe: meanSeverity ± amplitude (${plan.meanSeverity} ± ${plan.amplitude}) must stay within 0 .. 5`,
    );
  if (plan.longestPeriodFrames < 3 + plan.frequencies - 1)
    throw new KnobError(
      'INVALID_SETTINGS',
      `Invalid frequency probe: ${plan.frequencies} frequencies need periods of 3 .. at least ${plan.frequencies + 2} frames`,
    );
  return plan;
}

/** Frames per period of each test frequency, longest first (distinct whole numbers, log-spaced). */
/** The plan in words: "shot noise severity 3 ± 2, 8 frequencies at 30 fps". */
export function describeFrequencyProbePlan(plan: FrequencyProbePlan): string {
  return `${plan.corruption.replaceAll('_', ' ')} severity ${plan.meanSeverity} ± ${plan.amplitude}, ${plan.frequencies} frequencies at ${plan.frameRateHz} fps`;
}

export function probePeriodsFrames(plan: FrequencyProbePlan): number[] {
  const count = plan.frequencies;
  const periods: number[] = [];
  for (let i = 0; i < count; i++) {
    const ideal = Math.round(plan.longestPeriodFrames * (3 / plan.longestPeriodFrames) ** (i / (count - 1)));
    // distinct and decreasing: never above what is left for the remaining ones
    const ceiling = i === 0 ? plan.longestPeriodFrames : periods[i - 1]! - 1;
    periods.push(Math.max(3 + (count - 1 - i), Math.min(ideal, ceiling)));
  }
  return periods;
}

/** The frequency probe's stream for period k: its schedule and its length in frames. */
export function frequencyProbeStream(
  plan: FrequencyProbePlan,
  periodFrames: number,
): { schedule: CorruptionSchedule; frames: number; analysisFrames: number } {
  const periodsPerBatch = Math.max(1, Math.ceil(plan.minBatchFrames / periodFrames));
  const analysisFrames = plan.batches * periodsPerBatch * periodFrames;
  return {
    schedule: {
      kind: 'sine',
      corruption: plan.corruption,
      mean: plan.meanSeverity,
      amplitude: plan.amplitude,
      frequencyHz: plan.frameRateHz / periodFrames,
      frameRateHz: plan.frameRateHz,
      phaseRad: 0,
    },
    frames: plan.settleFrames + analysisFrames,
    analysisFrames,
  };
}

export interface FrequencyProbePoint {
  frequencyHz: number;
  periodFrames: number;
  measured: LockInResult;
  /** The discrete theory of the knobs at this frequency (app convention). */
  theory: { magnitudeDb: number; phaseDeg: number };
  /** |measured - theory| in dB, and in the measurement's standard errors. */
  magnitudeErrorDb: number;
  magnitudeErrorInStandardErrors: number;
  /** Frames of the analysis window where g left [0, 1]. */
  clippedFrames: number;
  clipped: boolean;
  /** The knobs' predicted 2 % settling time fits in the settling allowance. */
  transientDiscarded: boolean;
}

export interface FrequencyProbeResult {
  plan: FrequencyProbePlan;
  settings: GateSettings;
  points: FrequencyProbePoint[];
  /** The discrete theory curve over the probed range (for the Bode plot). */
  theoryCurve: FrequencySeries;
  /**
   * Low-pass: the highest unclipped frequency's magnitude lies below the lowest's by more than two
   * standard errors of their difference (a resonant gate rises near wn first, as its theory does).
   */
  lowPass: boolean;
}

/** The probe at `settings` from its recorded streams (one per frequency, in probePeriodsFrames order). */
export function frequencyProbeAt(
  traces: Trace[],
  plan: FrequencyProbePlan,
  settings: GateSettings,
): FrequencyProbeResult {
  const periods = probePeriodsFrames(plan);
  if (traces.length !== periods.length)
    throw new KnobError(
      'INVALID_INPUT',
      `the frequency probe has ${traces.length} streams for ${periods.length} frequencies`,
    );
  const hSeconds = 1 / plan.frameRateHz;
  const settling = discreteResponseMetrics(settings, hSeconds, 'app').settlingTimeSeconds;
  const points = periods.map((periodFrames, i): FrequencyProbePoint => {
    const trace = traces[i]!;
    const stream = frequencyProbeStream(plan, periodFrames);
    if (trace.frameCount !== stream.frames)
      throw new KnobError(
        'INVALID_INPUT',
        `the stream at ${periodFrames} frames a period has ${trace.frameCount} frames, not ${stream.frames}`,
      );
    const { g } = replay(trace, settings);
    const from = stream.frames - stream.analysisFrames;
    const u = Float64Array.from(trace.uRef.subarray(from));
    const seen = new Float64Array(stream.analysisFrames);
    let clippedFrames = 0;
    for (let t = 0; t < seen.length; t++) {
      const value = g[from + t]!;
      if (value < 0 || value > 1) clippedFrames++;
      seen[t] = Math.min(1, Math.max(0, value));
    }
    const frequencyHz = plan.frameRateHz / periodFrames;
    const measured = lockIn(u, seen, { rateHz: plan.frameRateHz, frequencyHz, batches: plan.batches });
    const theory = frequencyResponseAt(settings, 2 * Math.PI * frequencyHz, { system: 'discrete', hSeconds });
    const magnitudeErrorDb = Math.abs(measured.magnitudeDb - theory.magnitudeDb);
    return {
      frequencyHz,
      periodFrames,
      measured,
      theory,
      magnitudeErrorDb,
      // a noiseless stream has a zero standard error: an exact match is then 0 errors, not 0 / 0
      magnitudeErrorInStandardErrors: magnitudeErrorDb === 0 ? 0 : magnitudeErrorDb / measured.magnitudeDbStandardError,
      clippedFrames,
      clipped: clippedFrames > 0,
      transientDiscarded: settling !== null && settling <= plan.settleFrames * hSeconds,
    };
  });
  const unclipped = points.filter((p) => !p.clipped);
  const [lowest, highest] = [unclipped[0]?.measured, unclipped[unclipped.length - 1]?.measured];
  const lowPass =
    unclipped.length >= 2 &&
    highest!.magnitudeDb <
      lowest!.magnitudeDb - 2 * Math.hypot(lowest!.magnitudeDbStandardError, highest!.magnitudeDbStandardError);
  const lowestW = 2 * Math.PI * points[0]!.frequencyHz;
  const highestW = 2 * Math.PI * points[points.length - 1]!.frequencyHz;
  const curvePoints = 200;
  const w = Float64Array.from(
    { length: curvePoints },
    (_, i) => (lowestW / 2) * ((highestW * 1.2) / (lowestW / 2)) ** (i / (curvePoints - 1)),
  );
  // the highest point, 1.2 x rate / 3, stays below Nyquist
  const theoryCurve = frequencyResponseSeries(settings, w, { system: 'discrete', hSeconds });
  return { plan, settings, points, theoryCurve, lowPass };
}
