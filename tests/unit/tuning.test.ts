/**
 * The tuner (src-shared/tuning): its objective is the metric suite's own figure for the same frames
 * (every metric, with an output temperature too); the grid, the constraints and the Pareto front;
 * a tune that respects its constraints, reports the paired interval of its improvement, says so when
 * nothing is feasible, and stops when cancelled; a long recording's screened search (its thresholds
 * lowered here, so that this 3,000-frame trace is "long") chooses among settings scored on every
 * search frame.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { metricSuite } from '../../src-shared/metrics/metric-suite';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';
import { eachResample, resample } from '../../src-shared/metrics/bootstrap';
import { binnedStatistics } from '../../src-shared/metrics/column-statistics';
import { expectedCalibrationError } from '../../src-shared/metrics/calibration-error';
import { EQUAL_WIDTH_15 } from '../../src-shared/metrics/metric-suite';
import { replay } from '../../src-shared/trace/replay';
import {
  paretoFront,
  parseTuningRequest,
  screenedFrames,
  SCREENING_DEFAULTS,
  tune,
  tuningFrames,
  tuningGrid,
  TuningObjective,
  TUNING_METRIC_IDENTITIES,
  TUNING_METRICS,
  violationsOf,
  type TuningCandidate,
  type TuningPoint,
} from '../../src-shared/tuning';
import { paretoPlotSvg, tuningHeatmapSvg } from '../../src-shared/plots/tuning-plots';
import { syntheticTrace } from '../support/synthetic-trace';

const trace = syntheticTrace({ frames: 3000, seed: 7, uRef: (i) => 0.5 + 0.45 * Math.sin(i / 40) });
const current = { settings: DEFAULT_GATE_SETTINGS, temperature: 1 };

/** The suite's figures for the fused output of the given frames at `settings`, logits divided by T. */
function suiteAt(settings: GateSettings, temperature: number, frames: Int32Array) {
  const { fusedLogits } = replay(trace, settings, { keepFusedLogits: true });
  const k = trace.classCount;
  const logits = new Float64Array(frames.length * k);
  frames.forEach((frame, j) => {
    for (let c = 0; c < k; c++) logits[j * k + c] = fusedLogits![frame * k + c]! / temperature;
  });
  const labels = Int32Array.from(frames, (frame) => trace.labels![frame]!);
  return metricSuite(scoresFromLogits(logits, k, labels));
}

describe('the tuning objective', () => {
  const { search, heldOut: frames } = tuningFrames(trace, { kind: 'time', evaluateFraction: 0.3 });

  it('searches on the first 70 % of the labelled frames and reports on the last 30 % (time-ordered)', () => {
    expect(search.length).toBe(2100);
    expect(search[0]).toBe(0);
    expect(search[2099]).toBe(2099);
    expect(frames.length).toBe(900);
    expect(frames[0]).toBe(2100);
    expect(frames[899]).toBe(2999);
  });

  for (const temperature of [1, 1.7])
    it(`equals the metric suite's figure of the same identity, every metric (temperature ${temperature})`, () => {
      const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.4, wnRadPerSec: 3 };
      const suite = suiteAt(settings, temperature, frames);
      for (const metric of TUNING_METRICS) {
        const objective = new TuningObjective(trace, frames, metric);
        const value = objective.evaluate({ settings, temperature });
        const identity = TUNING_METRIC_IDENTITIES[metric].replace('K classes', `${trace.classCount} classes`);
        const match =
          metric === 'smooth-ece'
            ? suite.find((m) => m.name === 'SmoothECE')
            : suite.find((m) => m.identity === identity);
        expect(match, metric).toBeDefined();
        expect(value, metric).toBeCloseTo(match!.value, 12);
      }
    });

  it("on frames spread out (a screened stride), reads their rows gathered and gives the full vectors' figure exactly", () => {
    const spread = search.filter((_, i) => i % 5 === 2);
    const point = { settings: { ...DEFAULT_GATE_SETTINGS, zeta: 0.4, wnRadPerSec: 3 }, temperature: 1.3 };
    for (const metric of TUNING_METRICS) {
      const gathered = new TuningObjective(trace, spread, metric).evaluate(point);
      expect(gathered, metric).toBe(new TuningObjective(trace, spread, metric, null, 'full-vectors').evaluate(point));
    }
    const suite = suiteAt(point.settings, point.temperature, spread);
    const ece = new TuningObjective(trace, spread, 'ece').evaluate(point);
    expect(ece).toBeCloseTo(suite.find((m) => m.identity === TUNING_METRIC_IDENTITIES.ece)!.value, 12);
  });

  it('its resample statistic gives the value on all frames, and on a resample the ECE of the resampled frames exactly', () => {
    const objective = new TuningObjective(trace, frames, 'ece');
    const statistic = objective.statisticAt(current);
    expect(statistic.evaluate(null)).toBe(objective.evaluate(current));
    const indices = Uint32Array.from({ length: frames.length }, (_, i) => Math.floor(i / 2));
    expect(statistic.evaluate(indices)).not.toBe(statistic.evaluate(null));
    // seeded resamples: the same bits as the resampled frames' top-label pairs binned again
    const { fusedLogits } = replay(trace, current.settings, { keepFusedLogits: true });
    const k = trace.classCount;
    const logits = new Float64Array(frames.length * k);
    frames.forEach((frame, j) => logits.set(fusedLogits!.subarray(frame * k, (frame + 1) * k), j * k));
    const top = topLabelScores(
      scoresFromLogits(
        logits,
        k,
        Int32Array.from(frames, (f) => trace.labels![f]!),
      ),
    );
    eachResample(frames.length, { replicates: 5, seed: 3 }, (drawn) => {
      const binned = binnedStatistics(resample(top.confidence, drawn), resample(top.correct, drawn), EQUAL_WIDTH_15);
      expect(statistic.evaluate(drawn)).toBe(expectedCalibrationError(binned));
    });
  });

  it('refuses a trace without labels and a bad temperature', () => {
    expect(() => new TuningObjective({ ...trace, labels: null }, frames, 'nll')).toThrow(/no labels/);
    expect(() => new TuningObjective(trace, frames, 'nll').evaluate({ ...current, temperature: 0 })).toThrow(
      /temperature must be positive/,
    );
  });
});

describe('the grid, the constraints and the Pareto front', () => {
  it('20 x 20 log-spaced (zeta, wn) by default, up to 0.8 x Nyquist capped at 60 rad/s', () => {
    const grid = tuningGrid(parseTuningRequest({}), current, 1 / 30);
    expect(grid).toHaveLength(400);
    const zetas = [...new Set(grid.map((p) => p.settings.zeta))];
    const wns = [...new Set(grid.map((p) => p.settings.wnRadPerSec))];
    expect(zetas[0]).toBeCloseTo(0.1, 12);
    expect(zetas[19]).toBeCloseTo(4, 12);
    expect(wns[0]).toBeCloseTo(0.5, 12);
    expect(wns[19]).toBeCloseTo(60, 12);
    expect(wns[1]! / wns[0]!).toBeCloseTo(wns[19]! / wns[18]!, 10);
    // a slow stream: 0.8 of its Nyquist
    const slow = tuningGrid(parseTuningRequest({}), current, 1 / 10);
    expect(Math.max(...slow.map((p) => p.settings.wnRadPerSec))).toBeCloseTo(0.8 * Math.PI * 10, 10);
  });

  it('variants, modes, horizons and temperatures multiply the grid', () => {
    const request = parseTuningRequest({
      variants: ['second-order', 'ema', 'instant'],
      modes: ['continuous', 'reset'],
      tauSeconds: [0.25, 0.5],
      temperatures: [1, 2],
      zeta: { points: 4 },
      wnRadPerSec: { points: 5 },
    });
    // per variant: continuous (1 horizon) + reset (2 horizons) = 3, times 2 temperatures
    expect(tuningGrid(request, current, 1 / 30)).toHaveLength((4 * 5 + 5 + 1) * 3 * 2);
  });

  it('violations name the constraint and the value; the instant gate has no bandwidth limit', () => {
    const constraints = { maxSettlingSeconds: 1, maxOvershootPercent: 5, minBandwidthHz: 2 };
    const figures = { metric: 0.1, settlingTimeSeconds: 1.5, overshootPercent: 9, bandwidthHz: 1 };
    expect(violationsOf(figures, constraints)).toEqual([
      'settling 1.500 s > 1 s',
      'overshoot 9.00 % > 5 %',
      'bandwidth 1.000 Hz < 2 Hz',
    ]);
    expect(violationsOf({ ...figures, settlingTimeSeconds: null }, { maxSettlingSeconds: 10 })).toEqual([
      'settling ∞ s > 10 s',
    ]);
    expect(
      violationsOf({ metric: 0, settlingTimeSeconds: 0, overshootPercent: 0, bandwidthHz: null }, constraints),
    ).toEqual([]);
  });

  it('the Pareto front: feasible, no member dominated by any feasible candidate', () => {
    const c = (metric: number, settling: number, feasible = true) =>
      ({ metric, settlingTimeSeconds: settling, overshootPercent: 0, bandwidthHz: 1, feasible }) as TuningCandidate;
    const all = [c(0.5, 0.1), c(0.3, 0.5), c(0.4, 0.6), c(0.2, 2), c(0.1, 0.05, false), c(0.25, 3)];
    const front = paretoFront(all);
    expect(front.map((p) => [p.metric, p.settlingTimeSeconds])).toEqual([
      [0.5, 0.1],
      [0.3, 0.5],
      [0.2, 2],
    ]);
  });
});

describe('tune', () => {
  const request = parseTuningRequest({
    metric: 'nll',
    constraints: { maxSettlingSeconds: 1.5, maxOvershootPercent: 10 },
    zeta: { points: 8 },
    wnRadPerSec: { points: 8 },
    replicates: 200,
  });

  it('improves on the current setting within its constraints, and gives the interval of the improvement', async () => {
    const start = { settings: { ...DEFAULT_GATE_SETTINGS, zeta: 1, wnRadPerSec: 12 }, temperature: 1 };
    const stages = new Set<string>();
    const result = await tune(trace, request, start, { onProgress: (_, __, stage) => stages.add(stage) });
    expect(stages).toEqual(new Set(['grid', 'refine']));
    expect(result.grid).toHaveLength(64);
    expect(result.foundFeasible).toBe(true);
    expect(result.best.feasible).toBe(true);
    expect(result.best.settlingTimeSeconds!).toBeLessThanOrEqual(1.5);
    expect(result.best.overshootPercent).toBeLessThanOrEqual(10);
    // the best is at least as good as every feasible point evaluated
    for (const c of [...result.grid, ...result.refinement])
      if (c.feasible) expect(result.best.metric).toBeLessThanOrEqual(c.metric);
    expect(result.current.feasible).toBe(true);
    expect(result.best.metric).toBeLessThanOrEqual(result.current.metric);
    // the improvement is judged on the held-out frames, not on the frames that chose the setting
    const heldOut = new TuningObjective(trace, tuningFrames(trace, request.split).heldOut, 'nll');
    expect(result.heldOutFrameCount).toBe(900);
    expect(result.searchFrameCount).toBe(2100);
    expect(result.heldOut.current).toBeCloseTo(heldOut.evaluate(start), 12);
    expect(result.heldOut.best).toBeCloseTo(heldOut.evaluate(result.best.point), 12);
    expect(result.improvement.difference).toBeCloseTo(result.heldOut.best - result.heldOut.current, 12);
    expect(result.improvement.interval.lo).toBeLessThanOrEqual(result.improvement.interval.hi);
    expect(result.improvement.identity).toBe(TUNING_METRIC_IDENTITIES.nll);
    expect(result.evaluations).toBeGreaterThan(64);
  });

  it('the verdict follows the interval: better beyond the noise, else indistinguishable', async () => {
    // from an output divided by a temperature of 5 (far too flat), a tuned setting at temperature 1
    // is better on the held-out frames beyond the noise
    const flat = { settings: DEFAULT_GATE_SETTINGS, temperature: 5 };
    const better = await tune(trace, { ...request, refine: false, temperatures: [1] }, flat);
    expect(better.improvement.interval.hi).toBeLessThan(0);
    expect(better.improvement.verdict).toBe('better');
    // from the tuned setting itself, nothing better is found: a zero difference is within the noise
    const again = await tune(trace, { ...request, refine: false }, better.best.point);
    expect(again.improvement.difference).toBe(0);
    expect(again.improvement.verdict).toBe('indistinguishable');
  });

  it('with constraints nothing meets, keeps the current setting and says so', async () => {
    const impossible = parseTuningRequest({
      constraints: { maxSettlingSeconds: 0.001 },
      zeta: { points: 3 },
      wnRadPerSec: { points: 3 },
    });
    const result = await tune(trace, impossible, current);
    expect(result.foundFeasible).toBe(false);
    expect(result.best.point).toBe(current);
    expect(result.grid.every((c) => c.violations.length > 0)).toBe(true);
  });

  it('stops with CANCELLED when cancelled', async () => {
    const controller = new AbortController();
    const run = tune(trace, request, current, {
      signal: controller.signal,
      onProgress: () => controller.abort(),
    });
    await expect(run).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('refuses a bad request by field', () => {
    expect(() => parseTuningRequest({ metric: 'accuracy' })).toThrow(/metric/);
    expect(() => parseTuningRequest({ zeta: { min: 2, max: 1 } })).toThrow(/min must not exceed max/);
    expect(() => parseTuningRequest({ constraints: { maxSettlingSeconds: -1 } })).toThrow(/maxSettlingSeconds/);
  });
});

/** A small grid, so the screened tunes below take a fraction of a second. */
const small = { zeta: { points: 5 }, wnRadPerSec: { points: 5 } };

describe("the tuner's screening", () => {
  it('screens only above its threshold, every s-th search frame, at most its frame count', () => {
    const search = Int32Array.from({ length: 10_001 }, (_, i) => 2 * i);
    expect(screenedFrames(search, null)).toBeNull();
    expect(screenedFrames(search, { ...SCREENING_DEFAULTS, aboveFrames: 10_001 })).toBeNull();
    // a stride of 1 would score every frame twice: no screening
    expect(screenedFrames(search, { aboveFrames: 1_000, frames: 20_000, confirmed: 3 })).toBeNull();
    const screened = screenedFrames(search, { aboveFrames: 10_000, frames: 1_000, confirmed: 3 })!;
    // stride ceil(10,001 / 1,000) = 11: frames 0, 22, 44, ...
    expect(screened.length).toBe(910);
    expect(Array.from(screened.subarray(0, 3))).toEqual([0, 22, 44]);
    expect(screened[909]).toBe(2 * 11 * 909);
    // a day at 30 fps, 70 % searched: 50,000 frames of 1,814,400
    const day = screenedFrames(new Int32Array(1_814_400), SCREENING_DEFAULTS)!;
    expect(day.length).toBeLessThanOrEqual(SCREENING_DEFAULTS.frames);
    expect(day.length).toBeGreaterThan(SCREENING_DEFAULTS.frames * 0.95);
  });

  it('scores the grid on the stride, the best settings again on every search frame, and chooses among those', async () => {
    const request = parseTuningRequest({ ...small, screening: { aboveFrames: 1_000, frames: 300, confirmed: 4 } });
    const frames = tuningFrames(trace, request.split, request.searchOn, request.screening);
    expect(frames.search.length).toBe(2100);
    expect(frames.screened!.length).toBe(300);
    const result = await tune(trace, request, current);
    expect(result.screenedFrameCount).toBe(300);
    expect(result.searchFrameCount).toBe(2100);
    const onStride = new TuningObjective(trace, frames.screened!, request.metric);
    const onEvery = new TuningObjective(trace, frames.search, request.metric);
    const metricOn = (objective: TuningObjective, point: TuningPoint) => objective.evaluate(point);
    for (const c of [...result.grid, ...result.refinement]) expect(c.metric).toBe(metricOn(onStride, c.point));
    expect(result.current.metric).toBe(metricOn(onEvery, current));
    // the four best distinct feasible settings of the screened search, scored on every frame
    const screenedBest = [...result.grid, ...result.refinement]
      .filter((c) => c.feasible)
      .sort((a, b) => a.metric - b.metric)
      .map((c) => JSON.stringify(c.point))
      .filter((key, i, keys) => keys.indexOf(key) === i)
      .slice(0, 4);
    expect(result.confirmed.map((c) => JSON.stringify(c.point))).toEqual(screenedBest);
    for (const c of result.confirmed) {
      expect(c.stage).toBe('confirm');
      expect(c.metric).toBe(metricOn(onEvery, c.point));
    }
    const exactBest = Math.min(...result.confirmed.map((c) => c.metric));
    expect(result.best.stage).toBe('confirm');
    expect(result.best.metric).toBe(exactBest);
    // every figure says which frames its numbers are on
    const stride = 'an even stride of 300 of the 2100 search frames (screened)';
    expect(tuningHeatmapSvg(result)).toContain(stride);
    expect(tuningHeatmapSvg(result)).toContain('on every search frame');
    expect(paretoPlotSvg(result)).toContain(stride);
  });

  it('scores every search frame below the threshold or when turned off, as before', async () => {
    for (const screening of [null, { aboveFrames: 2_100, frames: 300, confirmed: 4 }]) {
      const request = parseTuningRequest({ ...small, refine: false, screening });
      const result = await tune(trace, request, current);
      expect(result.screenedFrameCount).toBeNull();
      expect(result.confirmed).toEqual([]);
      const onEvery = new TuningObjective(trace, tuningFrames(trace, request.split).search, request.metric);
      for (const c of result.grid) expect(c.metric).toBe(onEvery.evaluate(c.point));
      expect(result.best.stage).toBe('grid');
    }
  });

  it('refuses screening settings out of range by field', () => {
    expect(() => parseTuningRequest({ screening: { frames: 10 } })).toThrow(/screening\.frames/);
    expect(() => parseTuningRequest({ screening: { confirmed: 0 } })).toThrow(/screening\.confirmed/);
  });
});
