/**
 * A short recording runs and reports what it can (issue 27, deliverable 6c), and every headline
 * interval of the embedded stream through the real model contains its estimate (6a): `knob run`
 * and `knob metrics` as a user runs them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { knob } from '../support/knob-cli';

const root = mkdtempSync(join(tmpdir(), 'knob-short-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The shipped model over the embedded test set. */
const SHIPPED = ['run', '--model', 'default', '--source', 'default'];

interface Figure {
  name: string;
  value: number;
  lo: number;
  hi: number;
  method: string;
  note?: string;
}

describe('knob run on a short recording', () => {
  it.each([10, 1])('--limit %i succeeds and names the metrics it could not compute', async (limit) => {
    const out = join(root, `run-${limit}`);
    const text = await knob(...SHIPPED, '--limit', String(limit), '--out', out);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`not computed \\(3\\): CE\\(top-label, 15 equal-mass.*not enough frames: needs 15, got ${limit}`),
    );
    // TCE too, named with what it needs (more frames than its minimum bin size of 10)
    expect(text.stdout).toMatch(new RegExp(`; TCE\\(top-label.* — not enough frames: needs 11, got ${limit}$`, 'm'));
    const metrics = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as {
      fused?: Array<{ name: string; unavailable?: { needed: number; got: number } }>;
    };
    const json = JSON.stringify(metrics);
    expect(json).toContain('"unavailable":{"reason":"not enough frames","needed":15,"got":' + limit + '}');
    const metricsText = await knob('metrics', '--trace', join(out, 'trace.arrow'));
    expect(metricsText.status, metricsText.stderr).toBe(0);
    expect(metricsText.stdout).toMatch(/TCE\(top-label.*\(not enough frames: needs 11, got \d+\)/);
    expect(metricsText.stdout).toMatch(/accuracy\(top-1\)/);
  });

  it('every headline interval of the embedded stream contains its estimate (2,000 frames, the shipped model)', async () => {
    const out = join(root, 'run-2000');
    const run = await knob(...SHIPPED, '--limit', '2000', '--out', out, '--json');
    expect(run.status, run.stderr).toBe(0);
    const headline = (JSON.parse(run.stdout) as { headline: Figure[] }).headline;
    expect(headline.map((f) => f.name)).toEqual(['accuracy', 'NLL', 'Brier', 'ECE']);
    for (const f of headline) {
      expect(f.lo, `${f.name}: ${f.method}`).toBeLessThanOrEqual(f.value);
      expect(f.hi, `${f.name}: ${f.method}`).toBeGreaterThanOrEqual(f.value);
      expect(f.lo, f.name).toBeLessThan(f.hi);
    }
    expect(headline[0].method).toBe('95 % Wilson score interval, n = 2000');
    expect(headline[3].method).toMatch(/^95 % bias-corrected basic bootstrap/);
  });
});
