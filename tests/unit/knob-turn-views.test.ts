/**
 * A knob turn's view on a held recording (use-cases/held-recording.ts) reuses one buffer from view
 * to view, writes the probabilities over the fused logits, and reads every class's statistics once
 * for both the suite's classwise metrics and the per-class diagrams (issue 29). None of that may
 * change a figure: each view equals the one computed afresh from a plain trace, across settings,
 * a recording that grows and one that shrinks to a window, and every per-class diagram equals the
 * diagram of that class's column gathered on its own (reliabilityDiagram); a fully labelled view's
 * replay output takes its confidence from the scores' pass, and it is the replay's own.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { EQUAL_WIDTH_15 } from '../../src-shared/metrics/metric-suite';
import { reliabilityDiagram } from '../../src-shared/metrics/reliability';
import { replay } from '../../src-shared/trace/replay';
import { scoresOfFrames, labelledFrames } from '../../src-shared/trace/trace-scores';
import { sliceTrace } from '../../src-shared/trace/trace-slice';
import { UNKNOWN_LABEL } from '../../src-shared/trace/trace';
import { HeldRecording } from '../../src-main/core/use-cases/held-recording';
import { metricsSnapshot } from '../../src-main/core/use-cases/metrics-snapshot';
import { plainSource, replayedView } from '../../src-main/core/use-cases/view-replay';
import { syntheticTrace } from '../support/synthetic-trace';

const basis = { version: 1, recordingId: 4, calibrator: null };
const nothingHeld: HeldRecording | null = null;
const withoutTime = <T extends { computeMs: number }>(snapshot: T) => ({ ...snapshot, computeMs: 0 });

describe("a knob turn's view on a held recording", () => {
  const full = syntheticTrace({ frames: 2400, classCount: 6, seed: 21 });
  // a fifth of the frames unlabelled: the labelled rows are then gathered, not read in place
  for (let i = 0; i < full.frameCount; i += 5) full.labels![i] = UNKNOWN_LABEL;
  const options = { groupBy: 'predicted-class' as const, detail: 'light' as const };

  it('equals the view computed afresh, setting after setting, as the recording grows and in a window', () => {
    const held = HeldRecording.apply(nothingHeld, {
      recordingId: 4,
      kind: 'whole',
      trace: sliceTrace(full, 0, 1200, 'copy'),
    });
    const cases: Array<[number, number, number | undefined]> = [
      [1200, 0.4, undefined],
      [1200, 1.1, undefined],
      [2400, 0.7, undefined],
      [2400, 0.7, 500],
      [2400, 0.2, undefined],
    ];
    for (const [frames, zeta, lastFrames] of cases) {
      if (held.frameCount < frames)
        HeldRecording.apply(held, {
          recordingId: 4,
          kind: 'append',
          from: held.frameCount,
          rows: sliceTrace(full, held.frameCount, frames, 'copy'),
          labels: full.labels!.slice(0, frames),
        });
      const settings = { ...DEFAULT_GATE_SETTINGS, zeta };
      const fresh = metricsSnapshot(plainSource(sliceTrace(full, 0, frames, 'copy')), settings, basis, {
        ...options,
        lastFrames,
      });
      const turned = metricsSnapshot(held, settings, basis, { ...options, lastFrames });
      expect(withoutTime(turned)).toEqual(withoutTime(fresh));
      expect(turned.classReliability).toHaveLength(6);
    }
  });

  it("takes a fully labelled view's confidence from its scores: the replay's own, bit for bit", () => {
    const labelled = syntheticTrace({ frames: 1500, classCount: 7, seed: 22 });
    const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.35 };
    const view = replayedView(plainSource(labelled), settings, undefined);
    const alone = replay(labelled, settings);
    expect(view.frames).toHaveLength(labelled.frameCount);
    expect(view.output.confidence).toEqual(alone.confidence);
    expect(view.output.top1).toEqual(alone.top1);
    expect(view.output.fusedLogits).toBeNull(); // written over by the probabilities
  });

  it('draws each class diagram as the diagram of its own gathered column', () => {
    const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.6 };
    const snapshot = metricsSnapshot(plainSource(full), settings, basis, options);
    const frames = labelledFrames(full);
    const scores = scoresOfFrames(full, replay(full, settings, { keepFusedLogits: true }).fusedLogits!, frames);
    const n = scores.sampleCount;
    for (let c = 0; c < 6; c++) {
      const column = Float64Array.from({ length: n }, (_, i) => scores.probabilities[i * 6 + c]!);
      const isClass = Uint8Array.from({ length: n }, (_, i) => (scores.labels[i] === c ? 1 : 0));
      const name = full.labelNames[c] ?? String(c);
      const diagram = reliabilityDiagram(column, isClass, EQUAL_WIDTH_15, { kind: 'class', name });
      const shown = snapshot.classReliability[c]!;
      expect(shown.identity).toBe(diagram.identity);
      expect(shown.bins.map((b) => [b.count, b.meanConfidence, b.accuracy, b.wilsonLo, b.wilsonHi])).toEqual(
        diagram.bins.map((b) => [b.count, b.meanConfidence, b.accuracy, b.wilsonLo, b.wilsonHi]),
      );
    }
  });
});

describe('a cancelled view', () => {
  /** A signal that says aborted from its `reads`-th reading on (what the shared flag looks like). */
  const abortsAfter = (reads: number) => {
    let read = 0;
    return {
      get aborted() {
        return ++read >= reads;
      },
      get reads() {
        return read;
      },
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
    };
  };

  it('stops its resampling with CANCELLED within one resample of the cancel', () => {
    const trace = syntheticTrace({ frames: 3000, classCount: 5, seed: 23 });
    const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.8 };
    for (const at of [1, 5, 150]) {
      const signal = abortsAfter(at);
      expect(() =>
        metricsSnapshot(plainSource(trace), settings, basis, { detail: 'full', groupBy: 'none' }, undefined, signal),
      ).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
      expect(signal.reads).toBe(at);
    }
    // never cancelled: the same snapshot as without a signal
    const uncancelled = metricsSnapshot(
      plainSource(trace),
      settings,
      basis,
      { detail: 'full' },
      undefined,
      abortsAfter(1e9),
    );
    expect(withoutTime(uncancelled)).toEqual(
      withoutTime(metricsSnapshot(plainSource(trace), settings, basis, { detail: 'full' })),
    );
  });

  it("building a recording's tables stops between chunks and goes on from there next time", () => {
    const trace = syntheticTrace({ frames: 9000, classCount: 120, seed: 24 });
    const held = HeldRecording.apply(nothingHeld, { recordingId: 5, kind: 'whole', trace });
    const signal = abortsAfter(2);
    expect(() => held.table(1, true, undefined, signal)).toThrow(expect.objectContaining({ code: 'CANCELLED' }));
    const done: number[] = [];
    const table = held.table(1, true, (frames) => done.push(frames));
    expect(table.entryCount).toBe(9000);
    // the first chunk was kept: the second call started after it
    expect(done[0]).toBe(8192);
  });
});
