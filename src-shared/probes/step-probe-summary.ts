import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { KnobError } from '../errors';
import { percentileOfSorted } from '../metrics/order-statistics';
import { seededRandom } from '../random';
import type { GateSettings } from '../gate/gate-settings';
import { sampledStepInfo, type SampledStepInfo } from '../gate/response-metrics';
import { stepSeries } from '../gate/step-series';

/**
 * The step probe's statistics (issue 17) over R realisations of the same severity step (each a
 * stream with its own corruption seed, recorded at the same knobs): per frame, g's mean, median and
 * inter-quartile range across realisations and u*'s mean; the mean response normalised by the mean
 * u* step,
 *   y[t] = (mean g[t] - U_before) / (U_after - U_before),
 * with U_before and U_after the mean u* over the frames before the step and from it to the end of
 * the window; the step figures measured on y (python-control's step_info, response-metrics.ts) next
 * to those of the discrete prediction (the app's own update from rest, stepSeries); and the
 * bootstrap over realisations of d* = y* - y, carried around the prediction, with the share of the
 * frames from the step on where y lies inside it. Two bands (`band`):
 * - `simultaneous` (default): the studentised max-|t| band, pred +- c s[t], with s[t] the bootstrap
 *   standard deviation of d*[t] and c the `level` quantile over replicates of max_t |d*[t]| / s[t]
 *   (frames from the step on). It covers the whole response at once with probability `level`, so a
 *   gate that behaves as its knobs say lies inside at (almost) every frame;
 * - `pointwise`: [pred + q_2.5(d*[t]), pred + q_97.5(d*[t])] frame by frame, which a correct gate
 *   leaves at about 5 % of the frames by design (so "95 % of frames inside" is a coin flip).
 * The gate is linear, so the mean response is the step response of the mean input; a wrong
 * prediction leaves the band over the transient (insideFractionTransient).
 */
export interface StepProbeInput {
  /** g of each realisation over the window (equal lengths). */
  g: Float64Array[];
  /** u* of each realisation over the window. */
  uStar: Float64Array[];
  /** The first frame driven by the step (the window's frames before it are the baseline). */
  stepFrame: number;
  /** The frame interval, seconds. */
  hSeconds: number;
}

export interface StepProbeSummary {
  frames: number;
  realisations: number;
  meanG: Float64Array;
  medianG: Float64Array;
  q25G: Float64Array;
  q75G: Float64Array;
  meanUStar: Float64Array;
  uBefore: number;
  uAfter: number;
  /** y[t] above (about 0 before the step once g has settled on the baseline). */
  normalised: Float64Array;
  /** The discrete unit step response, 0 before the step frame. */
  predicted: Float64Array;
  bandLo: Float64Array;
  bandHi: Float64Array;
  /** Share of the frames from the step on where normalised lies within [bandLo, bandHi]. */
  insideFraction: number;
  /**
   * The same over the transient only: from the step to the predicted 2 % settling time (at least
   * 10 frames). The settled frames agree under any knobs, so this is the share that tells knobs apart.
   */
  insideFractionTransient: number;
  transientFrames: number;
  /** Step figures of y and of the prediction, from the step frame on (t = 0 there). */
  measured: SampledStepInfo;
  predictedInfo: SampledStepInfo;
  /**
   * Whether y ever leaves its noise band after the step: |y[t] - y_before| > z s[t] at some frame
   * t from the step on, with s[t] the bootstrap standard deviation of y[t] (across realisations)
   * and z the two-sided normal quantile at `level` Bonferroni-corrected over those frames. When it
   * never does, the response is below the noise floor: no rise or settling time is measured from
   * it (they are null in `measured`, and `note` says so), rather than the time the noise last
   * crossed the 2 % band.
   */
  noiseFloor: { belowNoiseFloor: boolean; z: number; note: string | null };
  bootstrap: { replicates: number; level: number; seed: number; band: StepProbeBand; criticalValue: number | null };
}

export type StepProbeBand = 'simultaneous' | 'pointwise';

/** The smallest mean u* step that normalises (below it the mean u* does not step). */
const MIN_STEP = 1e-9;

export interface StepProbeOptions {
  replicates?: number;
  level?: number;
  seed?: number;
  /** Default 'simultaneous'. */
  band?: StepProbeBand;
}

export function summariseStepProbe(
  input: StepProbeInput,
  settings: GateSettings,
  options: StepProbeOptions = {},
): StepProbeSummary {
  const { g, uStar, stepFrame, hSeconds } = input;
  const realisations = g.length;
  const frames = g[0]?.length ?? 0;
  if (realisations < 2 || uStar.length !== realisations)
    throw new KnobError(
      'INVALID_INPUT',
      `the step probe needs at least 2 realisations of g and u*, got ${realisations}`,
    );
  if (g.some((series) => series.length !== frames) || uStar.some((series) => series.length !== frames))
    throw new KnobError('INVALID_INPUT', 'every realisation must cover the same frames');
  if (!(Number.isInteger(stepFrame) && stepFrame >= 1 && stepFrame < frames - 1))
    throw new KnobError('INVALID_INPUT', `the step frame ${stepFrame} must leave frames before and after it`);
  for (let r = 0; r < realisations; r++)
    for (let t = 0; t < frames; t++)
      if (!Number.isFinite(g[r]![t]!) || !Number.isFinite(uStar[r]![t]!))
        throw new KnobError('INVALID_INPUT', `realisation ${r}, frame ${t}: g or u* is not finite`);

  const everyone = Uint32Array.from({ length: realisations }, (_, r) => r);
  const meanOf = (series: Float64Array[], chosen: Uint32Array, out: Float64Array) => {
    out.fill(0);
    for (const r of chosen) for (let t = 0; t < frames; t++) out[t] += series[r]![t]!;
    for (let t = 0; t < frames; t++) out[t] /= chosen.length;
    return out;
  };
  const levels = (u: Float64Array) => {
    let before = 0;
    let after = 0;
    for (let t = 0; t < stepFrame; t++) before += u[t]!;
    for (let t = stepFrame; t < frames; t++) after += u[t]!;
    return { before: before / stepFrame, after: after / (frames - stepFrame) };
  };
  const normaliseInto = (
    meanG: Float64Array,
    { before, after }: { before: number; after: number },
    out: Float64Array,
  ) => {
    for (let t = 0; t < frames; t++) out[t] = (meanG[t]! - before) / (after - before);
  };

  const meanG = meanOf(g, everyone, new Float64Array(frames));
  const meanUStar = meanOf(uStar, everyone, new Float64Array(frames));
  const normalised = new Float64Array(frames);
  const { before: uBefore, after: uAfter } = levels(meanUStar);
  if (Math.abs(uAfter - uBefore) < MIN_STEP)
    throw new KnobError('INVALID_INPUT', 'u* does not step: the mean u* is the same before and after the step frame');
  normaliseInto(meanG, { before: uBefore, after: uAfter }, normalised);

  // quantiles across realisations, frame by frame
  const medianG = new Float64Array(frames);
  const q25G = new Float64Array(frames);
  const q75G = new Float64Array(frames);
  const column = new Float64Array(realisations);
  for (let t = 0; t < frames; t++) {
    for (let r = 0; r < realisations; r++) column[r] = g[r]![t]!;
    column.sort();
    medianG[t] = percentileOfSorted(column, 0.5);
    q25G[t] = percentileOfSorted(column, 0.25);
    q75G[t] = percentileOfSorted(column, 0.75);
  }

  const predicted = new Float64Array(frames);
  predicted.set(stepSeries(settings, { system: 'discrete', hSeconds, frames: frames - stepFrame }).g, stepFrame);

  // percentile bootstrap over realisations of y* - y, frame by frame
  const replicates = options.replicates ?? 1000;
  const level = options.level ?? 0.95;
  const seed = options.seed ?? 0;
  const random = seededRandom(seed);
  const deviations = new Float64Array(replicates * frames); // [frame][replicate]
  const chosen = new Uint32Array(realisations);
  const meanGb = new Float64Array(frames);
  const meanUb = new Float64Array(frames);
  const yb = new Float64Array(frames);
  for (let b = 0; b < replicates; b++) {
    // a resample of realisations whose mean u* happens not to step is drawn again (at most 100 times)
    let step = { before: 0, after: 0 };
    for (let attempt = 0; ; attempt++) {
      for (let r = 0; r < realisations; r++) chosen[r] = Math.floor(random() * realisations);
      meanOf(uStar, chosen, meanUb);
      step = levels(meanUb);
      if (Math.abs(step.after - step.before) >= MIN_STEP) break;
      if (attempt === 100)
        throw new KnobError(
          'INVALID_INPUT',
          'too few realisations of u* step for a bootstrap (resamples keep missing the step)',
        );
    }
    meanOf(g, chosen, meanGb);
    normaliseInto(meanGb, step, yb);
    for (let t = 0; t < frames; t++) deviations[t * replicates + b] = yb[t]! - normalised[t]!;
  }
  const bandLo = new Float64Array(frames);
  const bandHi = new Float64Array(frames);
  const afterStep = (series: Float64Array) => series.subarray(stepFrame);
  const times = Float64Array.from({ length: frames - stepFrame }, (_, i) => i * hSeconds);
  const predictedInfo = sampledStepInfo(Float64Array.from(afterStep(predicted)), times);
  const settlingFrames =
    predictedInfo.settlingTimeSeconds === null ? frames : Math.round(predictedInfo.settlingTimeSeconds / hSeconds);
  const transientFrames = Math.min(frames - stepFrame, Math.max(10, settlingFrames));

  const band = options.band ?? 'simultaneous';
  const alpha = (1 - level) / 2;
  // bootstrap standard deviation per frame, floored so a frame the step never moves cannot divide by 0
  const spread = new Float64Array(frames);
  for (let t = 0; t < frames; t++) {
    const row = deviations.subarray(t * replicates, (t + 1) * replicates);
    let sum = 0;
    let squares = 0;
    for (const d of row) {
      sum += d;
      squares += d * d;
    }
    const mean = sum / replicates;
    spread[t] = Math.max(Math.sqrt(Math.max(0, squares / replicates - mean * mean)), 1e-12);
  }
  let criticalValue: number | null = null;
  if (band === 'simultaneous') {
    const maxima = new Float64Array(replicates);
    for (let b = 0; b < replicates; b++) {
      let worst = 0;
      for (let t = stepFrame; t < frames; t++)
        worst = Math.max(worst, Math.abs(deviations[t * replicates + b]!) / spread[t]!);
      maxima[b] = worst;
    }
    criticalValue = percentileOfSorted(maxima.sort(), level);
  }
  let inside = 0;
  let insideTransient = 0;
  for (let t = 0; t < frames; t++) {
    if (criticalValue !== null) {
      bandLo[t] = predicted[t]! - criticalValue * spread[t]!;
      bandHi[t] = predicted[t]! + criticalValue * spread[t]!;
    } else {
      const sorted = deviations.subarray(t * replicates, (t + 1) * replicates).sort();
      bandLo[t] = predicted[t]! + percentileOfSorted(sorted, alpha);
      bandHi[t] = predicted[t]! + percentileOfSorted(sorted, 1 - alpha);
    }
    const within = normalised[t]! >= bandLo[t]! && normalised[t]! <= bandHi[t]!;
    if (t >= stepFrame && within) inside++;
    if (t >= stepFrame && t < stepFrame + transientFrames && within) insideTransient++;
  }

  const noiseFloor = noiseFloorOf(normalised, spread, stepFrame, level);
  const measuredInfo = sampledStepInfo(Float64Array.from(afterStep(normalised)), times);
  return {
    frames,
    realisations,
    meanG,
    medianG,
    q25G,
    q75G,
    meanUStar,
    uBefore,
    uAfter,
    normalised,
    predicted,
    bandLo,
    bandHi,
    insideFraction: inside / (frames - stepFrame),
    insideFractionTransient: insideTransient / transientFrames,
    transientFrames,
    measured: noiseFloor.belowNoiseFloor
      ? { ...measuredInfo, riseTimeSeconds: null, settlingTimeSeconds: null }
      : measuredInfo,
    predictedInfo,
    noiseFloor,
    bootstrap: { replicates, level, seed, band, criticalValue },
  };
}

/** Does y leave its noise band from the step on (see StepProbeSummary.noiseFloor)? */
export function noiseFloorOf(
  normalised: Float64Array,
  spread: Float64Array,
  stepFrame: number,
  level: number,
): StepProbeSummary['noiseFloor'] {
  const frames = normalised.length;
  const z = normalQuantile(1 - (1 - level) / (2 * (frames - stepFrame)), 0, 1);
  let baseline = 0;
  for (let t = 0; t < stepFrame; t++) baseline += normalised[t]! / stepFrame;
  let largest = 0;
  for (let t = stepFrame; t < frames; t++) {
    const ratio = Math.abs(normalised[t]! - baseline) / spread[t]!;
    if (ratio > z) return { belowNoiseFloor: false, z, note: null };
    largest = Math.max(largest, ratio);
  }
  return {
    belowNoiseFloor: true,
    z,
    note:
      `below the noise floor: the mean response never leaves its noise band after the step (largest ` +
      `|y - y_before| ${largest.toFixed(2)} bootstrap standard deviations, band ${z.toFixed(2)}); no rise or settling time`,
  };
}
