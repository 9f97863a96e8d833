/**
 * The desk and the command line run one use case per operation (src-main/core/use-cases), so they
 * refuse the same input with the same words and read the same files the same way; each case here
 * goes through the real backend and the real `knob` command on the same recording:
 *  - calibrators on too few labelled frames (compare-calibrators.ts);
 *  - a probe of a colour corruption on the grayscale default model (probe-gate.ts; the desk did
 *    not check it before the probe had one use case);
 *  - a bundle's knobs: the desk's bundle.import and `--settings NAME.knob.zip` (import-knobs.ts).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { knob, knobFailureLine } from '../support/knob-cli';
import { refusalOf } from '../support/refusals';

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-use-cases-'));
const shortTrace = join(dir, 'short.arrow');
const bundle = join(dir, 'tuned.knob.zip');
const gate = { zeta: 0.45, wnRadPerSec: 7, variant: 'second-order' as const, mode: 'continuous' as const };

/** The words after the subject a refusal names (the desk and the CLI name the output their own way). */
const rule = (message: string): string => message.slice(message.lastIndexOf(': ') + 2);

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', { kind: 'embedded', discard: true });
  await backend.handle('stream.runOffline', { maxFrames: 12, discard: true });
  await backend.handle('trace.save', { path: shortTrace });
}, 120_000);
afterAll(async () => backend?.close());

describe('one use case, one refusal', () => {
  it('calibrators on 12 labelled frames: the desk and knob calibrate say the same', async () => {
    const desk = await refusalOf(
      backend.handle('calibrator.compare', { methods: ['temperature'], split: { kind: 'time' } }),
    );
    expect(desk.code).toBe('NOT_AVAILABLE');
    const cli = knobFailureLine(await knob('calibrate', '--trace', shortTrace, '--method', 'temperature'));
    expect(rule(desk.message)).toBe('12 labelled frames; fitting a calibrator needs at least 20');
    expect(rule(cli)).toBe(rule(desk.message));
  });

  it('a colour corruption probed on the grayscale model: refused by both before any pass', async () => {
    const desk = await refusalOf(backend.handle('probe.step', { corruption: 'saturate', realisations: 2 }));
    expect(desk.code).toBe('INVALID_SETTINGS');
    // invalid settings are bad usage on the command line (exit 2)
    const cli = knobFailureLine(await knob('probe', 'step', '--corrupt', 'saturate', '--realisations', '2'), 2);
    expect(desk.message).toMatch(/saturate changes colour saturation; the model's input is grayscale/);
    expect(cli).toBe(`knob: ${desk.message}`);
  });
});

describe('one import of knobs', () => {
  it("--settings NAME.knob.zip reads the bundle's knobs as the desk's bundle.import does", async () => {
    await backend.handle('knobs.set', { gate });
    await backend.handle('calibrator.set', { calibrator: { method: 'temperature', temperature: 1.25 } });
    await backend.handle('bundle.export', { path: bundle, includeModel: false });
    await backend.handle('knobs.set', { gate: { zeta: 1, wnRadPerSec: 2 } });
    await backend.handle('calibrator.set', { calibrator: null });
    const imported = await backend.handle('bundle.import', { path: bundle });
    expect(imported.knobs.gate).toMatchObject(gate);
    expect(imported.knobs.calibrator).toEqual({ method: 'temperature', temperature: 1.25 });

    const out = join(dir, 'replayed');
    const replayed = await knob('replay', shortTrace, '--settings', bundle, '--out', out, '--json');
    expect(replayed.status, replayed.stderr).toBe(0);
    const metrics = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as {
      settings: typeof imported.knobs.gate;
      calibrator: unknown;
    };
    expect(metrics.settings).toEqual(imported.knobs.gate);
    expect(metrics.calibrator).toEqual(imported.knobs.calibrator);
  });
});
