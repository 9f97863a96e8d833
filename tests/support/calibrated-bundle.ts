import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { knob } from './knob-cli';

/**
 * A trace's calibrator fitted by `knob calibrate --method METHOD`, exported with its model (the
 * shipped one by default) as DIR/METHOD.knob.zip, and `knob verify` of that bundle: each step must succeed. Returns the
 * bundle's manifest and what verify printed.
 */
export async function verifiedCalibratedBundle(trace: string, method: string, dir: string, model = 'default') {
  const settings = join(dir, `${method}-settings.json`);
  const calibrate = await knob('calibrate', '--trace', trace, '--method', method, '--out', settings);
  expect(calibrate.status, calibrate.stderr).toBe(0);
  const path = join(dir, `${method}.knob.zip`);
  const exported = await knob('export', '--trace', trace, '--model', model, '--settings', settings, '--out', path);
  expect(exported.status, exported.stderr).toBe(0);
  const { manifest } = await readVerifiedBundle(readFileSync(path), path);
  const verified = await knob('verify', path);
  expect(verified.status, verified.stderr).toBe(0);
  return { manifest, verified: verified.stdout };
}
