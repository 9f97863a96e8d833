import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function knob(...args: string[]) {
  const result = spawnSync(process.execPath, ['bin/knob.mjs', ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('knob command', () => {
  it('prints the response figures as JSON, the same numbers the knob panel shows', () => {
    const run = knob('response', '--zeta', '0.7', '--wn', '6', '--fps', '30', '--json');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as {
      continuous: { settlingTimeSeconds: number };
      discrete: { riseTimeSeconds: number };
    };
    expect(report.continuous.settlingTimeSeconds).toBeCloseTo(0.996465395, 9);
    expect(report.discrete.riseTimeSeconds).toBeCloseTo(11 / 30, 12);
  });
  it('exits 2 with a one-line reason on bad usage and bad settings', () => {
    expect(knob('response', '--zeta', 'abc').status).toBe(2);
    const bad = knob('response', '--zeta', '-1');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/zeta/);
    expect(knob('frobnicate').status).toBe(2);
    expect(knob('--help').status).toBe(0);
  });
});
