/**
 * Issue 32: conformal prediction sets on a real-sized recording (3,000 frames of 1,000 classes),
 * one use case for the desk and the command line: `conformal.sets` through the real backend and
 * `knob conformal --json` on the same trace give the same sets; each group's frames add up to the
 * judged ones and each coverage lies in its Wilson interval; a window without two labelled frames,
 * and bad options, are refused with words that name the problem.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { encodeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, knobFailureLine } from '../support/knob-cli';
import { refusalOf } from '../support/refusals';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-conformal-'));
const tracePath = join(dir, 'k1000.arrow');
const backend = new KnobBackend();

beforeAll(async () => {
  writeFileSync(tracePath, encodeTraceFile(syntheticTrace({ frames: 3000, classCount: 1000, seed: 5 }), null));
  await backend.handle('trace.load', { path: tracePath, discard: true });
}, 120_000);
afterAll(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('conformal prediction sets on 1,000 classes', () => {
  it('the desk and knob conformal give the same sets, per gate value, for LAC and APS', async () => {
    for (const score of ['lac', 'aps'] as const) {
      const desk = await backend.handle('conformal.sets', { alpha: 0.1, score, groupBy: 'gate-bucket' });
      expect(desk.calibrationFrames).toBe(1500);
      expect(desk.evaluatedFrames).toBe(1500);
      expect(desk.groups.reduce((sum, g) => sum + g.frames, 0)).toBe(1500);
      for (const c of [desk.overall, ...desk.groups]) {
        expect(c.lo).toBeLessThanOrEqual(c.coverage);
        expect(c.hi).toBeGreaterThanOrEqual(c.coverage);
        expect(c.meanSetSize).toBeGreaterThanOrEqual(0);
        expect(c.meanSetSize).toBeLessThanOrEqual(1000);
      }
      expect(desk.sizes.at(-1)!.size).toBe('10 or more');
      expect(desk.sizes.reduce((sum, s) => sum + s.frames, 0)).toBe(1500);
      const cli = await knob('conformal', tracePath, '--score', score, '--group-by', 'gate-bucket', '--json');
      expect(cli.status, cli.stderr).toBe(0);
      const { computeMs: _desk, recordingId: _id, settingsVersion: _version, ...deskSets } = desk;
      const { trace: _trace, ...cliSets } = JSON.parse(cli.stdout) as Record<string, unknown>;
      expect(cliSets).toEqual(deskSets);
    }
  }, 120_000);

  it('refuses a window with fewer than two labelled frames, and bad options', async () => {
    const refusal = await refusalOf(backend.handle('conformal.sets', { lastFrames: 1 }));
    expect(refusal).toMatchObject({ code: 'INVALID_INPUT' });
    expect(refusal.message).toMatch(/need at least 2 labelled frames in last 1 recorded frames, got 1$/);
    for (const [option, value, words] of [
      ['--alpha', '1', /--alpha must lie strictly between 0 and 1/],
      ['--alpha', '0', /--alpha must be a number above 0/],
      ['--score', 'raps', /--score must be one of lac, aps/],
      ['--calibration-share', '0.95', /--calibration-share must be a number from 0.1 to 0.9/],
    ] as const) {
      const result = await knob('conformal', tracePath, option, value);
      expect(knobFailureLine(result, 2), `${option} ${value}`).toMatch(words);
    }
  }, 60_000);
});
