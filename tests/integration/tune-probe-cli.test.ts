/**
 * Issue 17 on the command line, with the shipped model: `knob tune` on a recorded 10,000-frame
 * trace (random shot noise, blur and contrast, 90-frame holds), against a dense 2,000-point grid
 * (50 zeta x 40 wn over the same ranges, the same constraints) minimising the same objective on the
 * same frames, finds a setting no worse by more than 1 %: minimising on the held-out frames (the
 * issue's wording, --search-on held-out) its held-out ECE; by default (search on the first 70 %,
 * judged on the held-out 30 %) its search ECE, with the held-out comparison reported beside. It
 * respects every constraint, and prints its timing and the interval of its improvement; `knob probe step|bode` and `knob analyze` with --json and the HTML report; the
 * tuner's thread pool cancels; bad usage is refused.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { discreteResponseMetrics } from '../../src-shared/gate/response-metrics';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import {
  parseTuningRequest,
  tuningFrames,
  tuningFigures,
  TuningObjective,
  violationsOf,
  wnGridMax,
} from '../../src-shared/tuning';
import type { Trace } from '../../src-shared/trace/trace';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { tuneOnThreads } from '../../src-main/core/tuning/tuning-pool';
import { knob } from '../support/knob-cli';

const dir = mkdtempSync(join(tmpdir(), 'knob-tune-'));
const tracePath = join(dir, 'run', 'trace.arrow');
const CONSTRAINTS = ['--max-settling', '2', '--max-overshoot', '5', '--min-bandwidth', '0.2'];
let trace: Trace;

beforeAll(async () => {
  const run = await knob(
    'run',
    '--source',
    'default',
    '--limit',
    '10000',
    '--schedule',
    'random',
    '--corruptions',
    'shot_noise,gaussian_blur,contrast',
    '--hold',
    '90',
    '--seed',
    '3',
    '--out',
    join(dir, 'run'),
    '--json',
  );
  expect(run.status, run.stderr).toBe(0);
  trace = (await readTraceFile(tracePath)).trace;
  expect(trace.frameCount).toBe(10_000);
}, 120_000);

describe('knob tune', () => {
  const constraints = { maxSettlingSeconds: 2, maxOvershootPercent: 5, minBandwidthHz: 0.2 };
  const logSpace = (min: number, max: number, n: number) =>
    Array.from({ length: n }, (_, i) => min * (max / min) ** (i / (n - 1)));

  /** The best feasible ECE of the dense 50 x 40 grid on `frames` (one thread, the same objective). */
  function denseGridBest(frames: Int32Array): number {
    const request = parseTuningRequest({ constraints });
    const h = trace.nominalDtSeconds;
    const objective = new TuningObjective(trace, frames, 'ece');
    let best = Infinity;
    for (const zeta of logSpace(0.1, 4, 50))
      for (const wnRadPerSec of logSpace(0.5, wnGridMax(request, h), 40)) {
        const point = { settings: { ...DEFAULT_GATE_SETTINGS, zeta, wnRadPerSec }, temperature: 1 };
        const figures = tuningFigures(objective, point, h);
        if (violationsOf(figures, request.constraints).length === 0) best = Math.min(best, figures.metric);
      }
    return best;
  }

  function expectConstraintsMet(settings: GateSettings): void {
    const response = discreteResponseMetrics(settings, trace.nominalDtSeconds, 'app');
    expect(response.settlingTimeSeconds!).toBeLessThanOrEqual(2);
    expect(response.overshootPercent).toBeLessThanOrEqual(5);
    expect(response.bandwidthHz!).toBeGreaterThanOrEqual(0.2);
  }

  it('minimising the held-out ECE: within 1 % of the best of a dense 2,000-point grid, every constraint met', async () => {
    const result = await knob('tune', tracePath, ...CONSTRAINTS, '--search-on', 'held-out', '--json');
    expect(result.status, result.stderr).toBe(0);
    const tuned = JSON.parse(result.stdout);
    expect(tuned.searchedOnHeldOut).toBe(true);
    const { heldOut } = tuningFrames(trace, parseTuningRequest({}).split);
    const dense = denseGridBest(heldOut);
    expect(Number.isFinite(dense)).toBe(true);
    // the tuner's figure is the objective's own for its setting, on the held-out frames...
    expect(new TuningObjective(trace, heldOut, 'ece').evaluate(tuned.best.point)).toBeCloseTo(tuned.heldOut.best, 12);
    // ...no worse than the dense grid's best by more than 1 %
    expect(tuned.heldOut.best, `tuner ${tuned.heldOut.best}, dense grid ${dense}`).toBeLessThanOrEqual(dense * 1.01);
    expectConstraintsMet(tuned.best.point.settings);
  }, 120_000);

  it('by default searches the first 70 % as well as the dense grid, and judges the choice on the held-out 30 %', async () => {
    const result = await knob('tune', tracePath, ...CONSTRAINTS, '--json', '--out', join(dir, 'tune'));
    expect(result.status, result.stderr).toBe(0);
    const tuned = JSON.parse(result.stdout);
    expect(tuned.threads).toBeGreaterThanOrEqual(1);
    expect(tuned.foundFeasible).toBe(true);
    expect(tuned.searchedOnHeldOut).toBe(false);
    const frames = tuningFrames(trace, parseTuningRequest({}).split);
    expect(tuned.searchFrameCount).toBe(frames.search.length);
    expect(tuned.heldOutFrameCount).toBe(frames.heldOut.length);
    // 7,000 search frames: far below the screening's threshold, every one scored at every setting
    expect(tuned.screenedFrameCount).toBeNull();
    const dense = denseGridBest(frames.search);
    expect(tuned.best.metric, `tuner ${tuned.best.metric}, dense grid ${dense}`).toBeLessThanOrEqual(dense * 1.01);
    expectConstraintsMet(tuned.best.point.settings);
    // the choice judged on frames that did not make it, with its paired interval and verdict
    const heldOut = new TuningObjective(trace, frames.heldOut, 'ece');
    expect(tuned.heldOut.current).toBeCloseTo(
      heldOut.evaluate({ settings: DEFAULT_GATE_SETTINGS, temperature: 1 }),
      12,
    );
    expect(tuned.heldOut.best).toBeCloseTo(heldOut.evaluate(tuned.best.point), 12);
    expect(tuned.improvement.difference).toBeCloseTo(tuned.heldOut.best - tuned.heldOut.current, 12);
    expect(tuned.improvement.lo).toBeLessThanOrEqual(tuned.improvement.hi);
    const straddles = tuned.improvement.lo <= 0 && tuned.improvement.hi >= 0;
    expect(tuned.improvement.verdict === 'indistinguishable').toBe(straddles);

    // the report: the heat map with its constraint boundary, the Pareto front, the best settings
    const html = readFileSync(join(dir, 'tune', 'report.html'), 'utf8');
    expect(html).toContain('class="constraint-boundary"');
    expect(html).toContain('Pareto front');
    const settings = JSON.parse(readFileSync(join(dir, 'tune', 'knob-settings.json'), 'utf8'));
    expect(settings.gate.zeta).toBe(tuned.best.point.settings.zeta);
  }, 120_000);

  it('prints its timing and the interval of its improvement', async () => {
    const result = await knob('tune', tracePath, ...CONSTRAINTS, '--coarse-only', '--threads', '2');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /improvement: -?[\d.]+ \(best - current on the held-out frames; 95 % paired bootstrap interval -?[\d.]+ to -?[\d.]+/,
    );
    expect(result.stdout).toMatch(/search: +\d+ settings \(grid 400, refinement 0\) on 2 thread\(s\) in \d+\.\d\d s/);
    expect(result.stdout).toMatch(/constraints: 2 % settling <= 2 s, overshoot <= 5 %, bandwidth >= 0.2 Hz/);
    expect(result.stdout).toMatch(/held out: +current [\d.]+, best [\d.]+/);
    expect(result.stdout).toMatch(/searched on 7000 frames, reported on 3000 held-out frames/);
  }, 60_000);

  it('refuses bad usage with exit 2, naming the option', async () => {
    const noTrace = await knob('tune');
    expect(noTrace.status).toBe(2);
    expect(noTrace.stderr).toMatch(/knob tune takes one trace file/);
    const badRange = await knob('tune', tracePath, '--zeta-range', '1:2');
    expect(badRange.status).toBe(2);
    expect(badRange.stderr).toMatch(/--zeta-range must be MIN:MAX:N/);
    const reversed = await knob('tune', tracePath, '--zeta-range', '3:1:5');
    expect(reversed.status).toBe(2);
    expect(reversed.stderr).toMatch(/zeta: min must not exceed max/);
    const huge = await knob('tune', tracePath, '--zeta-range', '0.1:4:200', '--wn-range', '0.5:20:200');
    expect(huge.status).toBe(2);
    expect(huge.stderr).toMatch(
      /the grid would hold 40,000 settings \(200 zeta points x 200 wn points.*at most 20,000/,
    );
    const badMetric = await knob('tune', tracePath, '--metric', 'accuracy');
    expect(badMetric.status).toBe(2);
    expect(badMetric.stderr).toMatch(/metric/);
  });

  it('the thread pool stops when cancelled, with a typed error', async () => {
    const controller = new AbortController();
    const request = parseTuningRequest({});
    const running = tuneOnThreads(
      trace,
      request,
      { settings: DEFAULT_GATE_SETTINGS, temperature: 1 },
      { threads: 2, signal: controller.signal, onProgress: () => controller.abort() },
    );
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
  }, 60_000);
});

describe('knob probe and knob analyze', () => {
  it('probe step: the recorded figures, the identification and the report', async () => {
    const out = join(dir, 'step');
    const args = ['probe', 'step', '--realisations', '6', '--frames-per-level', '90', '--zeta', '0.7', '--wn', '6'];
    const result = await knob(...args, '--json', '--out', out);
    expect(result.status, result.stderr).toBe(0);
    const probe = JSON.parse(result.stdout);
    expect(probe.summary.realisations).toBe(6);
    expect(probe.summary.normalised).toHaveLength(180);
    expect(Math.abs(probe.identified.zeta / 0.7 - 1)).toBeLessThan(0.01);
    expect(probe.discrete.hSeconds).toBeCloseTo(1 / 30, 12);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('figure-step-probe.svg');
    const text = await knob(...args);
    expect(text.stdout).toMatch(/2 % settling time \(s\)/);
    expect(text.stdout).toMatch(/inside the 95 % simultaneous bootstrap band/);
  }, 60_000);

  it('probe bode: magnitudes against the discrete theory with standard errors', async () => {
    const result = await knob('probe', 'bode', '--frequencies', '4', '--json');
    expect(result.status, result.stderr).toBe(0);
    const probe = JSON.parse(result.stdout);
    expect(probe.points).toHaveLength(4);
    for (const p of probe.points) expect(p.measured.magnitudeDbStandardError).toBeGreaterThan(0);
    expect(probe.lowPass).toBe(true);
  }, 60_000);

  it('probe refuses an unknown kind and corruption', async () => {
    const sideways = await knob('probe', 'sideways');
    expect(sideways.status).toBe(2);
    expect(sideways.stderr).toMatch(/knob probe takes 'step' or 'bode' first, got 'sideways'/);
    const bad = await knob('probe', 'step', '--corrupt', 'rain');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--corrupt must be one of/);
  });

  it('analyze: T_eff, CSR, agreement, oracle advantage and polarisation, with the report', async () => {
    const out = join(dir, 'analyze');
    const result = await knob('analyze', tracePath, '--json', '--permutations', '99', '--out', out);
    expect(result.status, result.stderr).toBe(0);
    const analyses = JSON.parse(result.stdout);
    expect(analyses.frames).toBe(10_000);
    expect(analyses.teff.exceptionKinds.rounding).toBe(0);
    expect(analyses.csr.disagreement.mean).toBeLessThan(1);
    expect(analyses.oracleAdvantage.aurocUStar).toBeGreaterThan(0.5);
    expect(analyses.bySeverity.length).toBeGreaterThan(1);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('T_eff and CSR by severity');
    expect(html).toContain('Reliability where the branches disagree');
  }, 60_000);
});
