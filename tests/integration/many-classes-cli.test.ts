/**
 * `knob metrics --trace` on a model of many classes (issue 29): above 100 classes each frame is
 * scored on its own, so memory stays that of the trace, and the classwise metrics (every class of
 * every frame) are marked not computed; `--every-class` computes them. Every figure both compute is
 * the same number, for the fused output and each branch.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { measuredKnob } from '../support/measured-knob';
import { syntheticTrace } from '../support/synthetic-trace';

interface Figure {
  identity: string;
  value: number | string | null;
  unavailable?: { reason: string; classCount?: number };
}
interface Subject {
  subject: string;
  metrics: Figure[];
}

describe('knob metrics on a trace of many classes', () => {
  it('scores a frame at a time, marks the classwise metrics, and --every-class computes them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-many-classes-'));
    const path = join(dir, 'trace.arrow');
    writeFileSync(path, encodeTraceFile(syntheticTrace({ frames: 3000, classCount: 300, seed: 5 }), null));
    const topLabel = measuredKnob(['metrics', '--trace', path, '--json']);
    const everyClass = measuredKnob(['metrics', '--trace', path, '--json', '--every-class']);
    expect(topLabel.status, topLabel.line ?? '').toBe(0);
    expect(everyClass.status, everyClass.line ?? '').toBe(0);
    const subjects = (stdout: string): Subject[] => {
      const parsed = JSON.parse(stdout) as Subject & { branches: Subject[] };
      return [parsed, ...parsed.branches];
    };
    const [a, b] = [subjects(topLabel.stdout), subjects(everyClass.stdout)];
    expect(a.map((s) => s.subject)).toEqual(b.map((s) => s.subject));
    let marked = 0;
    a.forEach((subject, s) => {
      expect(subject.metrics.map((m) => m.identity)).toEqual(b[s]!.metrics.map((m) => m.identity));
      subject.metrics.forEach((m, i) => {
        const exact = b[s]!.metrics[i]!;
        if (m.unavailable?.reason === 'every class not computed') {
          marked++;
          expect(m.unavailable.classCount).toBe(300);
          expect(m.identity).toMatch(/classwise|marginal/);
          expect(exact.unavailable).toBeUndefined();
        } else expect(m.value, m.identity).toEqual(exact.value);
      });
    });
    // the suite's two binnings and the Kumar preset, for the fused output and each branch
    expect(marked).toBe(3 * 5);
    // a frame at a time: no probabilities of 3,000 x 300 kept for three subjects
    expect(topLabel.peakMb).toBeLessThan(everyClass.peakMb);
  }, 120_000);
});
