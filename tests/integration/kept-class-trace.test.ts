/**
 * Kept-class traces as files (issue 29: traces that fit the field): `knob compact` writes one, it
 * reads back as it was written, `knob metrics --trace` scores it with each metric's stated bound
 * holding against the full trace's own figures, `knob replay` and `knob run --keep` write the same
 * figures in metrics.json, everything that needs every class refuses it by name, and a file whose
 * kept columns lie is refused before anything is computed from it.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { KEPT_CLASS_ARRAYS, keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import type { Trace } from '../../src-shared/trace/trace';
import { measuredKnob } from '../support/measured-knob';
import { readScoresInput } from '../../src-main/cli/scores-input';
import { syntheticTrace } from '../support/synthetic-trace';
import { sameMetric } from '../support/same-metric';

interface Figure {
  identity: string;
  value: number | null;
  approximation?: string;
  unavailable?: { reason: string; keep?: number };
}
interface Subject {
  subject: string;
  metrics: Figure[];
  kept?: { description: string; unsettledFrames: number };
}

function keptTraceOf(trace: Trace, keep: number): Trace {
  return {
    ...trace,
    zStatic: new Float32Array(0),
    zDyn: new Float32Array(0),
    keptClasses: keepLeadingClasses(trace, keep),
  };
}

const subjects = (stdout: string): Subject[] => {
  const parsed = JSON.parse(stdout) as Subject & { branches: Subject[] };
  return [parsed, ...parsed.branches];
};

/**
 * A run folder's metrics.json, fused output then each branch, as `knob metrics --json` gives them:
 * by identity, a value that is not a finite number as null (metrics.json writes "NaN", the
 * command's JSON null).
 */
function runFolderMetrics(folder: string): Array<Map<string, Figure>> {
  const json = JSON.parse(readFileSync(join(folder, 'metrics.json'), 'utf8')) as {
    metrics: Record<'fused' | 'static' | 'dynamic', Figure[]>;
  };
  return [json.metrics.fused, json.metrics.static, json.metrics.dynamic].map(byIdentity);
}

function byIdentity(metrics: Figure[]): Map<string, Figure> {
  return new Map(
    metrics.map((m) => [m.identity, { ...m, value: typeof m.value === 'number' ? m.value : null }] as const),
  );
}

/**
 * Each figure of a run folder's metrics.json equals `knob metrics --trace` of the same trace (which
 * adds TCE for the branches too); returns how many carry a kept-class bound.
 */
function expectSameFiguresAsMetricsCommand(folder: string, trace: string): number {
  const measured = measuredKnob(['metrics', '--trace', trace, '--json']);
  expect(measured.status, measured.stderr).toBe(0);
  const fromCommand = subjects(measured.stdout).map((s) => byIdentity(s.metrics));
  let bounded = 0;
  runFolderMetrics(folder).forEach((written, s) => {
    expect(written.size, `subject ${s}`).toBeGreaterThan(40);
    for (const [identity, figure] of written) {
      expect(figure, identity).toEqual(fromCommand[s]!.get(identity));
      if (/within \S+ of it$/.test(figure.approximation ?? '')) bounded++;
    }
  });
  return bounded;
}

describe('kept-class traces', () => {
  const dir = mkdtempSync(join(tmpdir(), 'knob-kept-'));

  it('read back as written, and refused by everything that needs every class', async () => {
    const trace = syntheticTrace({ frames: 500, classCount: 40, seed: 3 });
    const path = join(dir, 'kept-roundtrip.arrow');
    const kept = keptTraceOf(trace, 6);
    writeFileSync(path, encodeTraceFile(kept, null, { note: 'kept' }));
    const back = await readTraceFile(path, undefined, 'kept classes too');
    const a = back.trace.keptClasses!;
    const b = kept.keptClasses!;
    expect(a.keep).toBe(6);
    for (const key of KEPT_CLASS_ARRAYS)
      expect(
        Buffer.from(a[key].buffer, a[key].byteOffset, a[key].byteLength).equals(
          Buffer.from(b[key].buffer, b[key].byteOffset, b[key].byteLength),
        ),
        key,
      ).toBe(true);
    expect(back.trace.zStatic.length).toBe(0);
    expect(Array.from(back.trace.labels!)).toEqual(Array.from(trace.labels!));
    await expect(readTraceFile(path)).rejects.toThrow(
      new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the trace keeps 6 of its 40 classes a frame`),
    );
  });

  it('a trace without labels is refused by name before anything is scored, kept or not', async () => {
    const trace = { ...syntheticTrace({ frames: 120, classCount: 12, seed: 6 }), labels: null };
    for (const [name, written] of [
      ['unlabelled-full.arrow', trace],
      ['unlabelled-kept.arrow', keptTraceOf(trace, 3)],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, encodeTraceFile(written, null));
      await expect(readScoresInput({ trace: path }, 'auto')).rejects.toThrow(
        `${path}: the trace has no labelled frames; metrics and calibrators need true labels`,
      );
    }
  });

  it('refuses kept columns that lie', async () => {
    const trace = syntheticTrace({ frames: 200, classCount: 20, seed: 4 });
    const cases: Array<[string, (t: Trace) => void, RegExp]> = [
      [
        'classes out of order',
        (t) => t.keptClasses!.classes.set([5, 2], 0),
        /kept classes of frame 0 are not distinct increasing/,
      ],
      ['a class past K', (t) => t.keptClasses!.classes.set([19, 40], 8), /kept classes of frame 2/],
      [
        'a rest below its maximum',
        (t) => (t.keptClasses!.restLseStatic[7] = t.keptClasses!.restMaxStatic[7]! - 1),
        /rest summary of frame 7/,
      ],
      [
        'a rest over its class count',
        (t) => (t.keptClasses!.restLseDyn[9] = t.keptClasses!.restMaxDyn[9]! + 50),
        /rest summary of frame 9/,
      ],
      ['a slope past the chord', (t) => (t.keptClasses!.restSlopeStatic[3] = 1e6), /rest slopes of frame 3/],
      ['a non-finite kept logit', (t) => (t.keptClasses!.zDyn[13] = Number.NaN), /kept logit of frame 3 is not finite/],
      ['an infinite rest', (t) => (t.keptClasses!.restLseDyn[4] = Infinity), /rest summary of frame 4/],
      [
        'a rest far above its maximum',
        (t) => (t.keptClasses!.restLseStatic[5] = t.keptClasses!.restMaxStatic[5]! + 1e6),
        /rest summary of frame 5/,
      ],
      [
        'a label not kept',
        (t) => {
          const kept = t.keptClasses!.classes.subarray(24, 28);
          t.labels![6] = Array.from({ length: 20 }, (_, c) => c).find((c) => !kept.includes(c))!;
        },
        /the label of frame 6 \(class \d+\) is not among its kept classes/,
      ],
    ];
    for (const [name, spoil, message] of cases) {
      const kept = keptTraceOf(trace, 4);
      spoil(kept);
      const path = join(dir, `lie-${name.replace(/ /g, '-')}.arrow`);
      writeFileSync(path, encodeTraceFile(kept, null));
      await expect(readTraceFile(path, undefined, 'kept classes too'), name).rejects.toThrow(message);
    }
  });

  it('knob compact, then knob metrics: every stated bound holds against the full trace', () => {
    const full = join(dir, 'full.arrow');
    const compact = join(dir, 'compact.arrow');
    writeFileSync(full, encodeTraceFile(syntheticTrace({ frames: 3000, classCount: 300, seed: 5 }), null));
    const made = measuredKnob(['compact', full, '--out', compact, '--keep', '24', '--json']);
    expect(made.status, made.line ?? '').toBe(0);
    const summary = JSON.parse(made.stdout) as { keep: number; frames: number; outputBytes: number };
    expect(summary).toMatchObject({ keep: 24, frames: 3000, outputBytes: statSync(compact).size });
    expect(statSync(compact).size * 5).toBeLessThan(statSync(full).size);

    const exact = measuredKnob(['metrics', '--trace', full, '--json']);
    const estimated = measuredKnob(['metrics', '--trace', compact, '--json']);
    expect(exact.status, exact.line ?? '').toBe(0);
    expect(estimated.status, estimated.line ?? '').toBe(0);
    const [a, b] = [subjects(estimated.stdout), subjects(exact.stdout)];
    expect(a.map((s) => s.subject)).toEqual(b.map((s) => s.subject.replace(full, compact)));
    let bounded = 0;
    let notKept = 0;
    a.forEach((subject, s) => {
      expect(subject.kept?.description).toBe('24 of 300 classes kept a frame');
      const exactValue = new Map(b[s]!.metrics.map((m) => [sameMetric(m.identity), m.value]));
      for (const m of subject.metrics) {
        if (m.unavailable !== undefined) {
          // the classwise metrics read every class: not 'ask for every class', which would be refused
          expect(m.unavailable, m.identity).toEqual({ reason: 'classes not kept', keep: 24, classCount: 300 });
          notKept++;
          continue;
        }
        expect(m.approximation, m.identity).toMatch(/^24 of 300 classes kept a frame: /);
        const stated = /within (\S+) of it$/.exec(m.approximation!);
        if (stated === null) continue;
        bounded++;
        expect(Math.abs(m.value! - exactValue.get(sameMetric(m.identity))!), m.identity).toBeLessThanOrEqual(
          Number(stated[1]),
        );
      }
    });
    // per subject, the 42 metrics with a stated bound (tests/unit/kept-class-scores.test.ts lists them)
    expect(bounded).toBe(3 * 42);
    expect(notKept).toBe(3 * 5);

    // knob replay writes the same figures, bounds and all, in its metrics.json and report
    const replayed = join(dir, 'replayed');
    const replay = measuredKnob(['replay', compact, '--out', replayed, '--json']);
    expect(replay.status, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({
      kept: {
        keep: 24,
        classCount: 300,
        description: '24 of 300 classes kept a frame',
        // the intervals and curves beside the metrics say they are of the estimates
        figures: expect.stringContaining('are of the kept-class estimates'),
      },
    });
    expect(expectSameFiguresAsMetricsCommand(replayed, compact)).toBe(3 * 42);
    expect(readFileSync(join(replayed, 'report.html'), 'utf8')).toContain(
      '24 of 300 classes kept a frame: each metric says how far the full trace&#39;s value can lie',
    );
    const refused = measuredKnob(['tune', compact]);
    expect(refused.status).toBe(1);
    expect(refused.line).toMatch(/keeps 24 of its 300 classes a frame \(a kept-class trace\)/);
  }, 120_000);

  it('knob run --keep records what knob compact makes of the full run, and refuses what it cannot keep', async () => {
    const full = join(dir, 'run-full');
    const keptRun = join(dir, 'run-kept');
    const compacted = join(dir, 'run-compacted.arrow');
    const run = (...more: string[]) => measuredKnob(['run', '--source', 'default', '--limit', '700', ...more]);
    expect(run('--out', full).status).toBe(0);
    const recorded = run('--keep', '4', '--out', keptRun, '--json');
    expect(recorded.status, recorded.stderr).toBe(0);
    const summary = JSON.parse(recorded.stdout) as {
      files: { trace: string; metrics: string; report: string };
      kept: { keep: number; classCount: number; description: string; unsettledFrames: number };
      labelledFrames: number;
    };
    expect(summary.files).toEqual({
      trace: join(keptRun, 'trace.arrow'),
      metrics: join(keptRun, 'metrics.json'),
      report: join(keptRun, 'report.html'),
    });
    expect(summary.kept).toMatchObject({ keep: 4, classCount: 10, description: '4 of 10 classes kept a frame' });
    expect(summary.labelledFrames).toBe(700);
    // its metrics.json holds knob metrics --trace's figures of its trace, each bound included
    expect(expectSameFiguresAsMetricsCommand(keptRun, join(keptRun, 'trace.arrow'))).toBe(3 * 42);
    expect(measuredKnob(['compact', join(full, 'trace.arrow'), '--keep', '4', '--out', compacted]).status).toBe(0);
    const [a, b] = await Promise.all(
      [join(keptRun, 'trace.arrow'), compacted].map((path) => readTraceFile(path, undefined, 'kept classes too')),
    );
    for (const key of KEPT_CLASS_ARRAYS) {
      const [x, y] = [a!.trace.keptClasses![key], b!.trace.keptClasses![key]];
      expect(x.length, key).toBe(700 * (['classes', 'zStatic', 'zDyn'].includes(key) ? 4 : 1));
      expect(
        Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength)),
        key,
      ).toBe(true);
    }
    expect(Array.from(a!.trace.labels!)).toEqual(Array.from(b!.trace.labels!));
    expect(Array.from(a!.trace.uRef)).toEqual(Array.from(b!.trace.uRef));
    // so its metrics, each with its stated bound, are the compacted trace's
    const metricsOf = (path: string) => {
      const measured = measuredKnob(['metrics', '--trace', path, '--json']);
      expect(measured.status, measured.stderr).toBe(0);
      return subjects(measured.stdout).map((s) => s.metrics);
    };
    expect(metricsOf(join(keptRun, 'trace.arrow'))).toEqual(metricsOf(compacted));

    expect(run('--keep', '10', '--out', join(dir, 'refused')).line).toBe(
      'knob: classes kept a frame must be an integer from 2 to 9 (the trace has 10 classes), got 10',
    );
    const one = run('--keep', '1', '--out', join(dir, 'refused'));
    expect([one.status, one.line]).toEqual([2, 'knob: --keep must be at least 2 classes a frame, got 1']);
    const labelled = run('--keep', '3', '--label-file', join(dir, 'labels.csv'), '--out', join(dir, 'refused'));
    expect(labelled.status).toBe(2);
    expect(labelled.line).toMatch(/^knob: --keep with --label-file: labels imported after the run would not be among/);
  }, 120_000);
});
