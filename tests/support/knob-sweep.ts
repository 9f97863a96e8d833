/**
 * Every knob-dependent computation of src-shared, called at the boundaries, just inside them and at
 * seeded random points of every accepted range (src-shared/gate/accepted-ranges.ts). Each call must
 * return a value with no NaN in it, or throw a typed KnobError; anything else (a NaN, a TypeError,
 * a call that never returns) is a defect. Runs in a worker thread (knob-sweep-worker.ts) so that a
 * hang is caught by a bounded wait in the test instead of freezing the test runner.
 */
import { paperAnalyses } from '../../src-shared/analysis';
import { KnobError } from '../../src-shared/errors';
import {
  clippingBound,
  COEFFICIENT_COUNT,
  continuousResponseMetrics,
  createGateState,
  DEFAULT_GATE_SETTINGS,
  discreteResponseMetrics,
  FRAME_RATE_RANGE_HZ,
  frequencyResponseSeries,
  GATE_DISCRETIZATIONS,
  GATE_VARIANTS,
  magnitudeAt,
  resetCoefficientsInto,
  runGate,
  stepCoefficientsInto,
  stepSeries,
  TAU_RANGE_SECONDS,
  WN_RANGE_RAD_PER_SEC,
  ZETA_RANGE,
  type AcceptedRange,
  type GateSettings,
} from '../../src-shared/gate';
import { identifySecondOrder } from '../../src-shared/gate/identify-second-order';
import { lockIn } from '../../src-shared/gate/lock-in';
import {
  frequencyProbeAt,
  frequencyProbeStream,
  parseFrequencyProbePlan,
  parseStepProbePlan,
  probePeriodsFrames,
  stepProbeAt,
  stepProbeFrames,
} from '../../src-shared/probes';
import { seededRandom } from '../../src-shared/random';
import { parseTuningRequest, tune } from '../../src-shared/tuning';
import { syntheticTrace } from './synthetic-trace';

/** The smallest double above x (x > 0). */
function nextUp(x: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  return view.getFloat64(0);
}

/** Boundaries, one ulp inside them, and seeded log-uniform points in between. */
export function pointsOf(range: AcceptedRange, extra: number[], randomCount: number, seed: number): number[] {
  const random = seededRandom(seed);
  const logMin = Math.log(range.min);
  const logMax = Math.log(range.max);
  const random_ = Array.from({ length: randomCount }, () => Math.exp(logMin + random() * (logMax - logMin)));
  const inside = [range.min, nextUp(range.min), range.max, range.max * (1 - Number.EPSILON), ...extra, ...random_];
  return inside.map((v) => Math.min(range.max, Math.max(range.min, v)));
}

/** Values just outside a range, and ones no schema may take (for the refusal tests). */
export function outsidePoints(range: AcceptedRange): number[] {
  return [
    range.min * (1 - Number.EPSILON),
    range.max * (1 + 2 * Number.EPSILON),
    0,
    -0,
    5e-324,
    2.2e-308,
    1e-17,
    -1,
    NaN,
    Infinity,
    -Infinity,
    1e308,
  ];
}

export interface SweepProgress {
  started: (name: string) => void;
}

/** Throws unless `value` holds no NaN anywhere (numbers, arrays, typed arrays, objects). */
function assertNoNaN(value: unknown, where: string, path = ''): void {
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new Error(`${where}: NaN at ${path || '(value)'}`);
  } else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    const array = value as unknown as ArrayLike<number>;
    for (let i = 0; i < array.length; i++)
      if (Number.isNaN(array[i])) throw new Error(`${where}: NaN at ${path}[${i}]`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertNoNaN(v, where, `${path}[${i}]`));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) assertNoNaN(v, where, path === '' ? key : `${path}.${key}`);
  }
}

/** Runs `call`: its result must hold no NaN; a KnobError (a typed refusal) also counts as returning. */
async function check(name: string, progress: SweepProgress, call: () => unknown): Promise<string | null> {
  progress.started(name);
  try {
    assertNoNaN(await call(), name);
    return null;
  } catch (error) {
    if (error instanceof KnobError) return error.message;
    throw error instanceof Error ? new Error(`${name}: ${error.message}`) : error;
  }
}

export interface SweepSummary {
  calls: number;
  /** Typed refusals by computation: how many, and the first message. */
  refused: Record<string, { count: number; first: string }>;
}

/** The cheap computations over the whole product of points; the costly ones at the corners. */
export async function sweepKnobComputations(progress: SweepProgress, seed = 26): Promise<SweepSummary> {
  const summary: SweepSummary = { calls: 0, refused: {} };
  const run = async (name: string, call: () => unknown) => {
    summary.calls++;
    const refusal = await check(name, progress, call);
    if (refusal === null) return;
    const computation = name.split(' ')[0]!;
    const entry = (summary.refused[computation] ??= { count: 0, first: `${name}: ${refusal}` });
    entry.count++;
  };
  const zetas = pointsOf(ZETA_RANGE, [0.7, 1, 1 - 1e-9, 1 + 1e-9, Math.SQRT1_2], 3, seed);
  const wns = pointsOf(WN_RANGE_RAD_PER_SEC, [6], 3, seed + 1);
  const rates = pointsOf(FRAME_RATE_RANGE_HZ, [30], 1, seed + 2);
  const taus = pointsOf(TAU_RANGE_SECONDS, [0.5], 1, seed + 3);
  const coefficients = new Float64Array(COEFFICIENT_COUNT);
  const frames = 64;
  const uRef = Float64Array.from({ length: frames }, (_, i) => (i < frames / 2 ? 0.2 : 0.9));
  const gateOut = { g: new Float64Array(frames), v: new Float64Array(frames) };
  for (const variant of GATE_VARIANTS)
    for (const discretization of GATE_DISCRETIZATIONS)
      for (const tustinPrewarp of discretization === 'tustin' ? [false, true] : [false])
        for (const zeta of variant === 'second-order' ? zetas : [DEFAULT_GATE_SETTINGS.zeta])
          for (const wnRadPerSec of variant === 'instant' ? [DEFAULT_GATE_SETTINGS.wnRadPerSec] : wns) {
            const settings: GateSettings = {
              ...DEFAULT_GATE_SETTINGS,
              variant,
              discretization,
              tustinPrewarp,
              zeta,
              wnRadPerSec,
            };
            const at = `${variant}/${discretization}${tustinPrewarp ? '+prewarp' : ''} zeta ${zeta} wn ${wnRadPerSec}`;
            await run(`continuousResponseMetrics ${at}`, () => continuousResponseMetrics(settings));
            await run(`clippingBound ${at}`, () => clippingBound(zeta));
            await run(`stepSeries continuous ${at}`, () =>
              stepSeries(settings, { system: 'continuous', durationSeconds: 100 / wnRadPerSec, points: 64 }),
            );
            await run(`frequencyResponseSeries continuous ${at}`, () =>
              frequencyResponseSeries(settings, Float64Array.of(0, 1e-6, wnRadPerSec, 1e6), {
                system: 'continuous',
                hSeconds: 1,
              }),
            );
            for (const tauSeconds of taus) {
              const reset = { ...settings, mode: 'reset' as const, tauSeconds };
              await run(`resetCoefficientsInto ${at} tau ${tauSeconds}`, () => {
                resetCoefficientsInto(reset, coefficients);
                return coefficients;
              });
            }
            for (const rateHz of rates) {
              const hSeconds = 1 / rateHz;
              const here = `${at} at ${rateHz} Hz`;
              await run(`stepCoefficientsInto ${here}`, () => {
                stepCoefficientsInto(settings, hSeconds, coefficients);
                return coefficients;
              });
              await run(`runGate ${here}`, () => {
                const timestampsSeconds = Float64Array.from({ length: frames }, (_, i) => i * hSeconds);
                runGate(
                  settings,
                  { uRef, timestampsSeconds, nominalDtSeconds: hSeconds },
                  0,
                  frames,
                  createGateState(0.5),
                  gateOut,
                );
                return gateOut;
              });
              await run(`discreteResponseMetrics app ${here}`, () =>
                discreteResponseMetrics(settings, hSeconds, 'app'),
              );
              await run(`discreteResponseMetrics scipy ${here}`, () =>
                discreteResponseMetrics(settings, hSeconds, 'scipy'),
              );
              await run(`magnitudeAt discrete ${here}`, () =>
                magnitudeAt(settings, Math.PI / hSeconds, { system: 'discrete', hSeconds }),
              );
              await run(`frequencyResponseSeries discrete ${here}`, () =>
                frequencyResponseSeries(
                  settings,
                  Float64Array.of(0, Math.min(wnRadPerSec, Math.PI / hSeconds), Math.PI / hSeconds),
                  {
                    system: 'discrete',
                    hSeconds,
                  },
                ),
              );
            }
          }
  // The measurement layers (probes, identification, lock-in, tuner, analyses) at the corners of the
  // ranges and the default: each replays recorded frames, so these are the costly calls.
  const zetaCorners = [ZETA_RANGE.min, ZETA_RANGE.max, 0.7];
  const wnCorners = [WN_RANGE_RAD_PER_SEC.min, WN_RANGE_RAD_PER_SEC.max, 6];
  const rateCorners = [FRAME_RATE_RANGE_HZ.min, FRAME_RATE_RANGE_HZ.max, 30];
  const corners: Array<[number, number, number, boolean]> = [];
  for (let z = 0; z < 3; z++)
    for (let w = 0; w < 3; w++)
      for (let r = 0; r < 3; r++)
        // the tuner searches the whole zeta and wn ranges from any start, so its grid reaches the
        // corners by itself; it runs at a Latin square of the starts (every pair of zeta, wn and
        // rate corners once: 9 of the 27), being most of the sweep's time
        corners.push([zetaCorners[z]!, wnCorners[w]!, rateCorners[r]!, (z + w + r) % 3 === 0]);
  for (const [zeta, wnRadPerSec, frameRateHz, tuned] of corners) {
    const settings: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec };
    const hSeconds = 1 / frameRateHz;
    const at = `zeta ${zeta} wn ${wnRadPerSec} at ${frameRateHz} Hz`;
    const stepPlan = parseStepProbePlan({ framesPerLevel: 20, realisations: 3, frameRateHz });
    const stepTraces = Array.from({ length: 3 }, (_, r) =>
      syntheticTrace({
        frames: stepProbeFrames(stepPlan),
        frameRateHz,
        seed: r + 1,
        uRef: (i) => (i >= 20 && i < 40 ? 0.9 : 0.2 + 0.01 * r),
      }),
    );
    await run(`stepProbeAt ${at}`, () => stepProbeAt(stepTraces, stepPlan, settings, { replicates: 50 }));
    const frequencyPlan = parseFrequencyProbePlan({
      frequencies: 2,
      longestPeriodFrames: 8,
      settleFrames: 0,
      batches: 2,
      minBatchFrames: 8,
      frameRateHz,
    });
    const frequencyTraces = probePeriodsFrames(frequencyPlan).map((period, i) =>
      syntheticTrace({
        frames: frequencyProbeStream(frequencyPlan, period).frames,
        frameRateHz,
        seed: i + 1,
        uRef: (t) => 0.5 + 0.3 * Math.sin((2 * Math.PI * t) / period),
      }),
    );
    await run(`frequencyProbeAt ${at}`, () => frequencyProbeAt(frequencyTraces, frequencyPlan, settings));
    const n = 256;
    const u = Float64Array.from({ length: n }, (_, i) => 0.5 + 0.3 * Math.sin((2 * Math.PI * i) / 16));
    const g = new Float64Array(n);
    const timestampsSeconds = Float64Array.from({ length: n }, (_, i) => i * hSeconds);
    runGate(settings, { uRef: u, timestampsSeconds, nominalDtSeconds: hSeconds }, 0, n, createGateState(0.5), {
      g,
      v: new Float64Array(n),
    });
    await run(`identifySecondOrder ${at}`, () => identifySecondOrder(u, g, hSeconds, settings));
    await run(`lockIn ${at}`, () => lockIn(u, g, { rateHz: frameRateHz, frequencyHz: frameRateHz / 16 }));
    const trace = syntheticTrace({ frames: 300, frameRateHz, seed: 3 });
    if (tuned)
      await run(`tune ${at}`, () =>
        tune(
          trace,
          parseTuningRequest({
            zeta: { min: ZETA_RANGE.min, max: ZETA_RANGE.max, points: 3 },
            wnRadPerSec: { min: WN_RANGE_RAD_PER_SEC.min, max: null, points: 3 },
            replicates: 50,
            refineStarts: 2,
          }),
          { settings, temperature: 1 },
        ),
      );
    await run(`paperAnalyses ${at}`, () => paperAnalyses(trace, settings, { permutations: 50 }));
  }
  return summary;
}
