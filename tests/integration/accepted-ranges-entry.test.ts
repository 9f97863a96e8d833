/**
 * Issue 26's freezes, reproduced where a value enters: a damping ratio of 1e-17 (accepted before,
 * it made the settling search loop forever) is refused at once, with the field and its range, by
 * the command line (`knob response`, `knob tune`, `knob probe step`), by a settings file, by the
 * API (`knobs.set`) and by a bundle's manifest at `bundle.import`, with or without a model loaded;
 * and the host answers the next call.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { replay } from '../../src-shared/trace/replay';
import { startHostProcess, type HostProcess } from '../support/api-client';
import { knob, knobFailureLine } from '../support/knob-cli';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-ranges-'));
const ZETA_RANGE_TEXT = 'zeta must lie in [0.001, 100]';
const tracePath = join(dir, 'run.arrow');
const settingsPath = join(dir, 'knob-settings.json');

beforeAll(async () => {
  await writeTraceFile(tracePath, syntheticTrace({ frames: 200 }), null);
  writeFileSync(
    settingsPath,
    JSON.stringify({
      format: 'knob-settings',
      formatVersion: 1,
      gate: { ...DEFAULT_GATE_SETTINGS, zeta: 1e-17 },
      model: null,
    }),
  );
});

// An option's value out of its range is bad usage: exit 2, as every option of the CLI (README);
// a file with such a value is a failure: exit 1.
describe('the command line refuses zeta 1e-17 at once, naming the range', () => {
  it('knob response --zeta 1e-17', async () => {
    expect(knobFailureLine(await knob('response', '--zeta', '1e-17'), 2)).toContain(ZETA_RANGE_TEXT);
  });
  it('knob response --wn 5e-324 and --fps 0', async () => {
    expect(knobFailureLine(await knob('response', '--wn', '5e-324'), 2)).toContain(
      'wn must lie in [0.001, 1000] rad/s',
    );
    expect(knobFailureLine(await knob('response', '--fps', '0'), 2)).toMatch(
      /--fps must be a number from 0\.01 to 1000/,
    );
  });
  it('knob tune TRACE --zeta 1e-17', async () => {
    expect(knobFailureLine(await knob('tune', tracePath, '--zeta', '1e-17'), 2)).toContain(ZETA_RANGE_TEXT);
  });
  it('knob probe step --zeta 1e-17 (before any model is loaded)', async () => {
    expect(knobFailureLine(await knob('probe', 'step', '--source', 'default', '--zeta', '1e-17'), 2)).toContain(
      ZETA_RANGE_TEXT,
    );
  });
  it('a trace whose recorded run has zeta 1e-17, naming the file', async () => {
    const trace = syntheticTrace({ frames: 50 });
    const path = join(dir, 'hostile-run.arrow');
    const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 1e-17 };
    await writeTraceFile(path, trace, { settings, output: replay(trace, DEFAULT_GATE_SETTINGS) });
    const line = knobFailureLine(await knob('replay', path, '--out', join(dir, 'replayed')));
    expect(line).toContain(path);
    expect(line).toContain(ZETA_RANGE_TEXT);
  });
  it('a settings file with zeta 1e-17, naming the file', async () => {
    const line = knobFailureLine(await knob('response', '--settings', settingsPath));
    expect(line).toContain(settingsPath);
    expect(line).toContain(`gate.zeta: ${ZETA_RANGE_TEXT}`);
  });
});

describe('the host refuses it and keeps answering', () => {
  let host: HostProcess;
  let hostile: string;
  beforeAll(async () => {
    host = await startHostProcess();
    const calls: Array<[string, unknown]> = [
      ['model.load', { path: 'default' }],
      ['source.open', { kind: 'embedded', discard: true }],
      ['stream.runOffline', { maxFrames: 32, discard: true }],
    ];
    for (const [method, params] of calls) expect((await host.call(method, params, 120_000)).ok, method).toBe(true);
    const bundle = join(dir, 'good.knob.zip');
    expect((await host.call('bundle.export', { path: bundle }, 120_000)).ok).toBe(true);
    // the same bundle with zeta 1e-17 in its manifest (the manifest is not among the hashed members)
    const members = unzipSync(readFileSync(bundle));
    const manifest = JSON.parse(strFromU8(members['manifest.json']!)) as { gate: { zeta: number } };
    manifest.gate.zeta = 1e-17;
    members['manifest.json'] = strToU8(JSON.stringify(manifest));
    hostile = join(dir, 'hostile.knob.zip');
    writeFileSync(hostile, zipSync(members));
  }, 180_000);
  afterAll(async () => host?.stop());

  it('knobs.set { zeta: 1e-17 }: INVALID_SETTINGS naming zeta and its range; the knobs are unchanged', async () => {
    const before = await host.call('knobs.get');
    const reply = await host.call('knobs.set', { gate: { zeta: 1e-17 } });
    expect(reply.ok).toBe(false);
    expect(reply.error?.message).toContain(ZETA_RANGE_TEXT);
    const after = await host.call('knobs.get');
    expect(after.result).toEqual(before.result);
  });

  it('bundle.import of a manifest with zeta 1e-17 is refused, with a model loaded and without', async () => {
    const reply = await host.call('bundle.import', { path: hostile }, 60_000);
    expect(reply.ok).toBe(false);
    expect(reply.error?.message).toContain(`invalid manifest: gate.zeta: ${ZETA_RANGE_TEXT}`);
    expect((await host.call('session.get')).ok).toBe(true);
    const bare = await startHostProcess();
    try {
      const refused = await bare.call('bundle.import', { path: hostile }, 60_000);
      expect(refused.ok).toBe(false);
      expect(refused.error?.message).toContain(`invalid manifest: gate.zeta: ${ZETA_RANGE_TEXT}`);
      expect((await bare.call('session.get')).ok).toBe(true);
    } finally {
      await bare.stop();
    }
  }, 120_000);
});
