/**
 * knob export and knob verify (issue 15) on a real recording: the shipped model over the embedded
 * stream with shot noise, a temperature calibrator fitted by knob calibrate. The bundle carries
 * every setting and calibrator parameter exactly; verify accepts it (schema, hashes, the step graph
 * against the app) and refuses, with the reason and exit 1, a tampered member, a newer format
 * major version, a model file that is not the bundle's; a bundle without its model verifies its
 * equivalence only when the model is given.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArchive, writeArchive } from '../../src-main/core/files/zip-archive';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { readSettingsFile } from '../../src-main/core/recording/settings-file';
import { knob, knobFailureLine } from '../support/knob-cli';
import { verifiedCalibratedBundle } from '../support/calibrated-bundle';

const dir = mkdtempSync(join(tmpdir(), 'knob-bundle-'));
const bundlePath = join(dir, 'tuned.knob.zip');
const settingsPath = join(dir, 'knob-settings.json');

/** knob export of the recording with the calibrated settings. */
const exportTo = (out: string, ...extra: string[]) =>
  knob(
    'export',
    '--trace',
    join(dir, 'run', 'trace.arrow'),
    '--model',
    'default',
    '--settings',
    settingsPath,
    ...extra,
    '--out',
    out,
  );

/** knob run of the shipped model over the embedded stream with shot noise at one severity. */
const recordEmbedded = (out: string, frames: number, severity: number, ...extra: string[]) =>
  knob(
    'run',
    '--model',
    'default',
    '--source',
    'default',
    '--limit',
    String(frames),
    '--corrupt',
    'shot_noise',
    '--severity',
    String(severity),
    ...extra,
    '--out',
    out,
  );

beforeAll(async () => {
  const run = await recordEmbedded(join(dir, 'run'), 400, 4);
  expect(run.status, run.stderr).toBe(0);
  const calibrate = await knob(
    'calibrate',
    '--trace',
    join(dir, 'run', 'trace.arrow'),
    '--method',
    'temperature',
    '--zeta',
    '0.45',
    '--wn',
    '9',
    '--discretization',
    'tustin',
    '--out',
    settingsPath,
  );
  expect(calibrate.status, calibrate.stderr).toBe(0);
  const exported = await exportTo(bundlePath);
  expect(exported.status, exported.stderr).toBe(0);
}, 120_000);

/** The bundle with `change` applied to its members, written beside it. */
async function altered(name: string, change: (members: Map<string, Uint8Array>) => void): Promise<string> {
  const members = await readArchive(readFileSync(bundlePath), bundlePath);
  change(members);
  const path = join(dir, name);
  writeFileSync(path, writeArchive([...members].map(([p, bytes]) => ({ path: p, bytes }))));
  return path;
}

describe('knob export', () => {
  it('carries every setting and calibrator parameter exactly', async () => {
    const settings = await readSettingsFile(settingsPath);
    const { manifest } = await readVerifiedBundle(readFileSync(bundlePath), bundlePath);
    expect(manifest.gate).toEqual(settings.gate);
    expect(manifest.calibrator).toEqual(settings.calibrator);
    expect(manifest.calibrator?.method).toBe('temperature');
    expect(manifest.model.files[0]!.sha256).toBe(
      (await import('node:crypto')).createHash('sha256').update(readFileSync(DEFAULT_MODEL_PATH)).digest('hex'),
    );
    expect(manifest.timing.frameRateHz).toBeCloseTo(30, 9); // knob run's rate for the embedded stream
    expect(manifest.provenance.traceSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.deploy.stepGraph).toBe('deploy/step.onnx');
  });
});

describe('knob verify', () => {
  it('accepts the bundle: schema, hashes, and the step graph equal to the app', async () => {
    const result = await knob('verify', bundlePath);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/sound/);
    expect(result.stdout).toMatch(/hashes: all \d+ members match/);
    expect(result.stdout).toMatch(/equivalence: step graph = app within \S+ on 24 frames/);
  }, 60_000);

  it('refuses a tampered member, naming it', async () => {
    const path = await altered('tampered.knob.zip', (members) => {
      const metrics = members.get('report/metrics.json')!;
      metrics[10] = metrics[10]! ^ 1;
    });
    expect(knobFailureLine(await knob('verify', path))).toMatch(
      /member 'report\/metrics\.json' does not match its SHA-256/,
    );
  });

  it('refuses a newer major format version with a message that says to update', async () => {
    const path = await altered('future.knob.zip', (members) => {
      const manifest = JSON.parse(new TextDecoder().decode(members.get('manifest.json')!));
      members.set(
        'manifest.json',
        new TextEncoder().encode(JSON.stringify({ ...manifest, formatVersion: '2.0', somethingNew: true })),
      );
    });
    expect(knobFailureLine(await knob('verify', path))).toMatch(
      /bundle format 2\.0 is newer than this Knob Studio reads \(1\.x\); update Knob Studio/,
    );
  });

  it('refuses a model file that is not the one the bundle was tuned with', async () => {
    const other = join(dir, 'other.onnx');
    const bytes = readFileSync(DEFAULT_MODEL_PATH);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
    writeFileSync(other, bytes);
    expect(knobFailureLine(await knob('verify', bundlePath, '--model', other))).toMatch(
      /not the model the bundle was tuned with/,
    );
  });

  it('a bundle without its model: equivalence checked only when the model is given', async () => {
    const slim = join(dir, 'slim.knob.zip');
    const exported = await exportTo(slim, '--exclude-model');
    expect(exported.status, exported.stderr).toBe(0);
    expect(readFileSync(slim).length).toBeLessThan(readFileSync(bundlePath).length - 500_000);
    const without = await knob('verify', slim);
    expect(without.status).toBe(0);
    expect(without.stdout).toMatch(/equivalence: not checked \(the model is not in the bundle; give it with --model/);
    const withModel = await knob('verify', slim, '--model', DEFAULT_MODEL_PATH);
    expect(withModel.status, withModel.stderr).toBe(0);
    expect(withModel.stdout).toMatch(/model: .* is knob-fmnist\.onnx \(SHA-256 matches\)/);
    expect(withModel.stdout).toMatch(/equivalence: step graph = app within/);
  }, 60_000);
});

describe('a bundle with a feature calibrator (DAC)', () => {
  it("folds its k-NN over the model's features into the step graph, and verify finds it equal to the app", async () => {
    const run = await recordEmbedded(join(dir, 'features-run'), 300, 3, '--record-features');
    expect(run.status, run.stderr).toBe(0);
    const { manifest, verified } = await verifiedCalibratedBundle(join(dir, 'features-run', 'trace.arrow'), 'dac', dir);
    expect(manifest.calibrator?.method).toBe('dac');
    expect(manifest.deploy.stepGraph).toBe('deploy/step.onnx');
    expect(verified).toMatch(/equivalence: step graph = app within \S+ on 24 frames/);
  }, 120_000);
});
