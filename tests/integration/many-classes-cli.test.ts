/**
 * `knob metrics --trace` on a model of many classes (issue 29): above 100 classes each frame is
 * scored on its own, so memory stays that of the trace, and the classwise metrics (every class of
 * every frame) are marked not computed; `--every-class` computes them. Every figure both compute is
 * the same number, for the fused output and each branch. `knob replay` scores such a trace the same
 * way (it held every subject's n x K probabilities at once: 5.2 GB on an hour of 1,000 classes), so
 * its metrics.json holds the figures `knob metrics --trace` prints.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

  it('knob replay writes the figures knob metrics --trace prints, classwise ones marked the same way', () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-many-classes-replay-'));
    const path = join(dir, 'trace.arrow');
    writeFileSync(path, encodeTraceFile(syntheticTrace({ frames: 2000, classCount: 150, seed: 6 }), null));
    const replayed = measuredKnob(['replay', path, '--out', join(dir, 'run'), '--json']);
    expect(replayed.status, replayed.line ?? '').toBe(0);
    const measured = measuredKnob(['metrics', '--trace', path, '--json']);
    expect(measured.status, measured.line ?? '').toBe(0);
    const parsed = JSON.parse(measured.stdout) as Subject & { branches: Subject[] };
    const written = (
      JSON.parse(readFileSync(join(dir, 'run', 'metrics.json'), 'utf8')) as {
        metrics: Record<'fused' | 'static' | 'dynamic', Figure[]>;
      }
    ).metrics;
    let marked = 0;
    [written.fused, written.static, written.dynamic].forEach((figures, s) => {
      const printed = new Map([parsed, ...parsed.branches][s]!.metrics.map((m) => [m.identity, m] as const));
      expect(figures.length).toBeGreaterThan(40);
      for (const figure of figures) {
        const command = printed.get(figure.identity)!;
        expect(command, figure.identity).toBeDefined();
        // metrics.json writes a value that is not a finite number as "NaN", the command's JSON null
        expect(typeof figure.value === 'number' ? figure.value : null, figure.identity).toEqual(command.value);
        expect(figure.unavailable, figure.identity).toEqual(command.unavailable);
        if (figure.unavailable?.reason === 'every class not computed') marked++;
      }
    });
    expect(marked).toBe(3 * 5);
  }, 120_000);
});
