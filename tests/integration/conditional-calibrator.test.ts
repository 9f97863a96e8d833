/**
 * The condition-aware calibrator end to end (issue 30, must-show 4), with the shipped model and the
 * real CLI and backend: a mixed stream of three corruptions, each held at severity 5 for 200 frames
 * (shot and speckle noise are not among the model's training corruptions; contrast is), recorded
 * with the model's features. Fitted per corruption, it beats one global temperature held out (on a
 * random half of the frames, two splits) in the ECE within each condition and in NLL: the
 * overconfident noisy frames and the underconfident low-contrast ones pull one temperature in
 * opposite directions. In the desk it switches with the condition it detects from each frame's
 * features, through its hysteresis over the stream; its bundle passes `knob verify` with the step graph's equivalence (the graph computes
 * the detector).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import type { ApiResult } from '../../src-shared/api/contract';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, knobFailureLine, mixedConditionsRun } from '../support/knob-cli';
import { verifiedCalibratedBundle } from '../support/calibrated-bundle';

const dir = mkdtempSync(join(tmpdir(), 'knob-conditional-'));
const trace = join(dir, 'mixed', 'trace.arrow');
const FRAMES = 8000;
let backend: KnobBackend | null = null;
afterAll(async () => backend?.close());

type Figure = { name: string; identity: string; value: number | null };
type MethodFigures = ApiResult<'calibrator.compare'>['methods'][number];
const figure = (name: string) => (figures: Figure[]) => figures.find((f) => f.name === name)!;

describe('a condition-aware calibrator fitted per corruption', () => {
  it('beats one global calibrator held out, switches on the detected condition in the desk, and verifies as a bundle', async () => {
    await mixedConditionsRun(join(dir, 'mixed'), FRAMES);

    // The desk's comparison: both fitted on the same half, evaluated on the other half, for two
    // splits. Within each condition the global temperature leaves the noisy frames overconfident and
    // the low-contrast ones underconfident; the ECE over the mixture barely sees it (the two cancel
    // in its bins), the ECE within conditions and the NLL do.
    backend = new KnobBackend();
    await backend.handle('model.load', { path: 'default' });
    await backend.handle('trace.load', { path: trace });
    let conditional: MethodFigures | undefined;
    for (const seed of [1, 2]) {
      const comparison = await backend.handle('calibrator.compare', {
        methods: ['temperature', 'conditional'],
        split: { kind: 'random', evaluateFraction: 0.5, seed },
      });
      const [global, fitted] = comparison.methods;
      conditional = fitted;
      expect(fitted!.method).toBe('conditional');
      expect(fitted!.report.method).toMatch(/contrast: \d+ frames, .*shot_noise: \d+ frames/);
      const within = figure('ECE within conditions');
      expect(within(comparison.before).identity).toMatch(/within each of 3 conditions, mean over conditions/);
      expect(within(fitted!.figures).value).toBeLessThan(0.75 * within(global!.figures).value!);
      expect(within(fitted!.figures).value).toBeLessThan(0.75 * within(comparison.before).value!);
      expect(figure('NLL')(fitted!.figures).value).toBeLessThan(figure('NLL')(global!.figures).value!);
    }
    const spec = conditional!.spec;
    if (spec.method !== 'conditional') throw new Error('not a conditional spec');
    expect([...spec.conditions].sort()).toEqual(['contrast', 'shot_noise', 'speckle_noise']);
    // the noisy frames get T > 1 (overconfident), the low-contrast ones T < 1
    const temperatureOf = (name: string) => spec.temperatures[spec.conditions.indexOf(name)]!;
    expect(temperatureOf('shot_noise')).toBeGreaterThan(1);
    expect(temperatureOf('contrast')).toBeLessThan(1);

    // Applied in the desk: each frame's readout says the condition it applies, which follows the
    // recorded corruption (sampled in the middle of each 200-frame segment).
    await backend.handle('calibrator.set', { calibrator: spec });
    const { trace: recorded } = await readTraceFile(trace);
    const corruption = recorded.metadata.corruption!;
    if (corruption.kind !== 'category') throw new Error('no corruption column');
    let agree = 0;
    const seen = new Set<string>();
    const segments = FRAMES / 200;
    for (let segment = 0; segment < segments; segment++) {
      const frame = segment * 200 + 100;
      const view = await backend.handle('trace.frame', { frame });
      expect(view.calibratorCondition).toBeDefined();
      seen.add(view.calibratorCondition!);
      if (view.calibratorCondition === corruption.dictionary[corruption.codes[frame]!]) agree++;
    }
    expect(seen.size).toBe(3);
    expect(agree / segments).toBeGreaterThan(0.7);

    // Over the stream the default hysteresis (5 frames) keeps the detector's slips out: the gate
    // chart's switches are a few per recorded change of corruption, where frame by frame (a spec
    // without hysteresis) shot and speckle noise swap hundreds of times.
    expect(spec.hysteresisFrames).toBe(5);
    const switchesOf = async () =>
      (await backend!.handle('recording.series', { maxPoints: 1800 })).calibratorConditions!.switchCount;
    const changes = Array.from(corruption.codes).filter((c, i, all) => i > 0 && c !== all[i - 1]).length;
    const withHysteresis = await switchesOf();
    await backend.handle('calibrator.set', { calibrator: { ...spec, hysteresisFrames: 1 } });
    const frameByFrame = await switchesOf();
    expect(withHysteresis).toBeGreaterThan(changes / 2);
    expect(withHysteresis).toBeLessThan(3 * (changes + 1));
    expect(frameByFrame).toBeGreaterThan(10 * withHysteresis);
    await backend.handle('calibrator.set', { calibrator: spec });
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.calibrator).toMatch(/^condition-aware calibration, /);

    // The CLI fits the same method and writes it; the bundle folds the detector into the step graph.
    const { manifest, verified } = await verifiedCalibratedBundle(trace, 'conditional', dir);
    // with its hysteresis: in continuous mode the step graph carries the condition's state
    expect(manifest.calibrator).toMatchObject({ method: 'conditional', hysteresisFrames: 5 });
    expect(verified).toMatch(/equivalence: step graph = app within \S+ on \d+ frames/);

    // Conditions come from a metadata column: one the trace lacks is refused by name.
    expect(
      knobFailureLine(
        await knob('calibrate', '--trace', trace, '--method', 'conditional', '--condition-by', 'camera'),
        2,
      ),
    ).toMatch(/--condition-by: .* has no metadata column 'camera' \(it has corruption, severity/);
    expect(
      knobFailureLine(
        await knob(
          'calibrate',
          '--logits',
          'l.npy',
          '--labels',
          'y.npy',
          '--method',
          'conditional',
          '--condition-by',
          'corruption',
        ),
        2,
      ),
    ).toMatch(/--condition-by names metadata columns of a trace: it applies to --trace/);
    // the hysteresis is a whole number of frames, over a recorded stream
    const hysteresis = (...args: string[]) => knob('calibrate', ...args, '--method', 'conditional');
    expect(knobFailureLine(await hysteresis('--trace', trace, '--condition-hysteresis', '0'), 2)).toMatch(
      /--condition-hysteresis must be .*got '0'/,
    );
    expect(
      knobFailureLine(await hysteresis('--logits', 'l.npy', '--labels', 'y.npy', '--condition-hysteresis', '3'), 2),
    ).toMatch(/--condition-hysteresis applies over a recorded stream: it applies to --trace/);
  }, 240_000);
});
