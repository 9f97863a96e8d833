/**
 * The condition-aware calibrator end to end (issue 30, must-show 4), with the shipped model and the
 * real CLI and backend: a mixed stream of three corruptions, each held at severity 5 for 200 frames
 * (shot and speckle noise are not among the model's training corruptions; contrast is), recorded
 * with the model's features. Fitted per corruption, its held-out ECE beats one global temperature
 * (on a random half of the frames: the mixture's conditions make the overconfident noisy frames and
 * the underconfident low-contrast ones pull one temperature in opposite directions); in the desk it
 * switches with the condition it detects from each frame's features; its bundle passes `knob verify`
 * with the step graph's equivalence (the graph computes the detector).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, knobFailureLine } from '../support/knob-cli';
import { verifiedCalibratedBundle } from '../support/calibrated-bundle';

const dir = mkdtempSync(join(tmpdir(), 'knob-conditional-'));
const trace = join(dir, 'mixed', 'trace.arrow');
const FRAMES = 8000;
let backend: KnobBackend | null = null;
afterAll(async () => backend?.close());

const ece = (figures: Array<{ name: string; value: number | null }>) => figures.find((f) => f.name === 'ECE')!.value!;

describe('a condition-aware calibrator fitted per corruption', () => {
  it('beats one global calibrator held out, switches on the detected condition in the desk, and verifies as a bundle', async () => {
    const run = await knob(
      'run',
      '--source',
      'default',
      '--limit',
      String(FRAMES),
      '--record-features',
      '--schedule',
      'random',
      '--corruptions',
      'contrast,shot_noise,speckle_noise',
      '--hold',
      '200',
      '--min-severity',
      '5',
      '--max-severity',
      '5',
      '--out',
      join(dir, 'mixed'),
    );
    expect(run.status, run.stderr).toBe(0);

    // The desk's comparison: both fitted on the same half, evaluated on the other half.
    backend = new KnobBackend();
    await backend.handle('model.load', { path: 'default' });
    await backend.handle('trace.load', { path: trace });
    const comparison = await backend.handle('calibrator.compare', {
      methods: ['temperature', 'conditional'],
      split: { kind: 'random', evaluateFraction: 0.5, seed: 3 },
    });
    const [global, conditional] = comparison.methods;
    expect(conditional!.method).toBe('conditional');
    expect(conditional!.report.method).toMatch(/contrast: \d+ frames, .*shot_noise: \d+ frames/);
    expect(ece(conditional!.figures)).toBeLessThan(ece(global!.figures));
    expect(ece(conditional!.figures)).toBeLessThan(ece(comparison.before));
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
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.calibrator).toMatch(/^condition-aware calibration, /);

    // The CLI fits the same method and writes it; the bundle folds the detector into the step graph.
    const { manifest, verified } = await verifiedCalibratedBundle(trace, 'conditional', dir);
    expect(manifest.calibrator?.method).toBe('conditional');
    expect(verified).toMatch(/equivalence: step graph = app within \S+ on \d+ frames/);

    // Conditions come from a metadata column: one the trace lacks is refused by name.
    expect(
      knobFailureLine(
        await knob('calibrate', '--trace', trace, '--method', 'conditional', '--condition-by', 'camera'),
        2,
      ),
    ).toMatch(/--condition-by: .* has no metadata column 'camera' \(it has corruption, severity/);
  }, 240_000);
});
