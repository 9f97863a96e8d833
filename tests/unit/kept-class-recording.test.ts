/**
 * Recording straight to kept classes (issue 29: knob run --keep): a TraceBuilder with keepClasses
 * reduces each appended batch to its leading classes and rest summaries, through growth of its
 * columns, to the same values keepLeadingClasses makes of the whole trace; a GateReplayer advancing
 * on it writes the kept-class estimates of keptClassScoresOfFrames; a label the frame did not keep
 * is refused, and so is a kept count the classes do not allow.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { KEPT_CLASS_ARRAYS, keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import { keptClassScoresOfFrames } from '../../src-shared/trace/kept-class-scores';
import { GateReplayer, replay } from '../../src-shared/trace/replay';
import { allocateBatchMetadata, TraceBuilder } from '../../src-shared/trace/trace-builder';
import { UNKNOWN_LABEL } from '../../src-shared/trace/trace';
import { syntheticTrace } from '../support/synthetic-trace';

const CLASSES = 50;
const KEEP = 6;

describe('a kept-class recording', () => {
  const full = syntheticTrace({ frames: 1000, classCount: CLASSES, seed: 11 });
  // some frames unlabelled, as a partly labelled stream has them
  for (let i = 0; i < full.frameCount; i += 5) full.labels![i] = UNKNOWN_LABEL;

  function recorded(batches: number[]): { builder: TraceBuilder; replayer: GateReplayer } {
    const builder = new TraceBuilder(CLASSES, full.labelNames, full.nominalDtSeconds, true, 4, null, KEEP);
    const replayer = new GateReplayer(DEFAULT_GATE_SETTINGS, 0);
    let at = 0;
    for (let b = 0; at < full.frameCount; b++) {
      const count = Math.min(batches[b % batches.length]!, full.frameCount - at);
      const rows = (values: Float32Array) => values.slice(at * CLASSES, (at + count) * CLASSES);
      const first = builder.append(
        count,
        rows(full.zStatic as Float32Array),
        rows(full.zDyn as Float32Array),
        full.uRef.slice(at, at + count),
        full.timestampsSeconds.slice(at, at + count),
        full.labels!.slice(at, at + count),
        allocateBatchMetadata(count),
      );
      replayer.advance(builder.trace, first, first + count, builder.output);
      at += count;
    }
    return { builder, replayer };
  }

  it('keeps, batch by batch and through growth, what keepLeadingClasses keeps of the whole trace', () => {
    const whole = keepLeadingClasses(full, KEEP);
    for (const batches of [[1], [7, 64, 3], [1000]]) {
      const { builder } = recorded(batches);
      const trace = builder.snapshot();
      expect(trace.frameCount).toBe(full.frameCount);
      expect(trace.zStatic.length).toBe(0);
      for (const key of KEPT_CLASS_ARRAYS)
        expect(Array.from(trace.keptClasses![key]), `${key}, batches ${batches}`).toEqual(Array.from(whole[key]));
      expect(Array.from(trace.labels!)).toEqual(Array.from(full.labels!));
    }
  });

  it("advances the gate of the full replay, with the kept-class estimates' top-1 and confidence", () => {
    const { builder } = recorded([33]);
    const output = builder.snapshotOutput();
    const exact = replay(full, DEFAULT_GATE_SETTINGS);
    expect(Array.from(output.g)).toEqual(Array.from(exact.g));
    const frames = Int32Array.from({ length: full.frameCount }, (_, i) => i);
    const { top } = keptClassScoresOfFrames(
      builder.trace.keptClasses!,
      CLASSES,
      output.g,
      frames,
      new Int32Array(full.frameCount).fill(UNKNOWN_LABEL),
    );
    expect(Array.from(output.top1)).toEqual(Array.from(top.predicted));
    expect(Array.from(output.confidence)).toEqual(Array.from(top.confidence));
    // and each estimate within its stated distance of the full replay's confidence
    const { bounds } = keptClassScoresOfFrames(builder.trace.keptClasses!, CLASSES, output.g, frames, full.labels!);
    let differing = 0;
    for (let i = 0; i < full.frameCount; i++) {
      if (bounds.uncertainTop1[i] === 1) continue;
      expect(exact.top1[i]).toBe(output.top1[i]);
      const gap = exact.confidence[i]! - output.confidence[i]!;
      expect(gap).toBeLessThanOrEqual(bounds.confidenceUp[i]!);
      expect(-gap).toBeLessThanOrEqual(bounds.confidenceDown[i]!);
      if (gap !== 0) differing++;
    }
    // the gate is inside (0, 1) here, so the estimate is not exact everywhere: the check has teeth
    expect(differing).toBeGreaterThan(100);
  });

  it('takes a later label only among the classes the frame kept, and refuses a count its classes cannot keep', () => {
    const { builder } = recorded([100]);
    const kept = builder.trace.keptClasses!;
    const frame = 1; // labelled: its label is kept, and so are the classes leading either branch
    const keptClasses = Array.from(kept.classes.subarray(frame * KEEP, (frame + 1) * KEEP));
    const other = keptClasses.find((c) => c !== builder.trace.labels![frame])!;
    builder.setLabel(frame, other);
    expect(builder.trace.labels![frame]).toBe(other);
    builder.setLabel(frame, UNKNOWN_LABEL);
    const notKept = Array.from({ length: CLASSES }, (_, c) => c).find((c) => !keptClasses.includes(c))!;
    expect(() => builder.setLabel(frame, notKept)).toThrow(
      `frame 1 kept 6 classes and not class ${notKept}: a kept-class recording takes a label only among them`,
    );
    expect(() => new TraceBuilder(10, [], 1 / 30, true, 4, null, 10)).toThrow(
      'classes kept a frame must be an integer from 2 to 9 (the trace has 10 classes), got 10',
    );
  });
});
