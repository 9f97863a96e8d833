/**
 * Label layers (issue 27): corrections are a layer over the truth, never into it; undo and redo;
 * the metrics' choice of labels; imports fill only what the source left unlabelled.
 */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../src-shared/errors';
import { LabelLayers, NO_LABEL } from '../../src-shared/labels/label-layers';

const effective = (layers: LabelLayers): number[] => {
  const out = new Int32Array(layers.frameCount);
  layers.effectiveInto(out);
  return Array.from(out);
};

describe('label layers', () => {
  it('a correction goes beside the truth; undo and redo walk it back and forth', () => {
    const layers = new LabelLayers(4, Int32Array.from([3, 3, NO_LABEL, 1]));
    expect(layers.correct(0, 5)).toEqual({ frame: 0, truth: 3, correction: 5, effective: 5 });
    layers.correct(2, 7);
    layers.correct(3, 1);
    expect(effective(layers)).toEqual([5, 3, 7, 1]);
    expect(layers.columns().truth).toEqual(Int32Array.from([3, 3, NO_LABEL, 1])); // the truth untouched
    expect(layers.counted()).toMatchObject({ fromSource: 3, imported: 0, corrections: 3, canUndo: true });
    expect(layers.undo()).toEqual({ frame: 3, truth: 1, correction: NO_LABEL, effective: 1 });
    expect(layers.undo()!.frame).toBe(2);
    expect(effective(layers)).toEqual([5, 3, NO_LABEL, 1]);
    expect(layers.redo()).toEqual({ frame: 2, truth: NO_LABEL, correction: 7, effective: 7 });
    expect(layers.counted()).toMatchObject({ corrections: 2, canUndo: true, canRedo: true });
    layers.correct(1, 0); // a new step forgets the redo
    expect(layers.counted().canRedo).toBe(false);
    expect(layers.redo()).toBeNull();
  });

  it('the metrics read the truth alone when asked', () => {
    const layers = new LabelLayers(3, Int32Array.from([2, 2, 2]));
    layers.correct(1, 0);
    layers.useCorrections = false;
    expect(effective(layers)).toEqual([2, 2, 2]);
    layers.useCorrections = true;
    expect(effective(layers)).toEqual([2, 0, 2]);
  });

  it('an import fills unlabelled frames and never replaces the source labels', () => {
    const layers = new LabelLayers(4, Int32Array.from([1, NO_LABEL, NO_LABEL, 4]));
    layers.importTruth(Int32Array.from([1, 2, 3]), Int32Array.from([6, 6, 4]), 'labels.csv');
    expect(effective(layers)).toEqual([1, 6, 6, 4]);
    expect(layers.originOf(1)).toBe('imported');
    expect(layers.originOf(3)).toBe('source');
    expect(layers.counted()).toMatchObject({ fromSource: 2, imported: 2 });
    let error: unknown = null;
    try {
      layers.importTruth(Int32Array.from([0, 3]), Int32Array.from([2, 5]), 'other.csv');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).message).toBe(
      "other.csv: 2 frames (the first 0) already have the source's own label, which an import never replaces; correct them as the operator instead",
    );
    expect(effective(layers)).toEqual([1, 6, 6, 4]); // nothing changed
  });

  it('a live recording appends frames; saved columns restore the layers', () => {
    const live = new LabelLayers(0, null);
    for (let i = 0; i < 2000; i++) live.append(i % 3 === 0 ? NO_LABEL : i % 10);
    live.correct(1999, 0);
    const saved = live.columns();
    const restored = new LabelLayers(2000, saved.truth, saved);
    expect(effective(restored)).toEqual(effective(live));
    expect(restored.counted()).toMatchObject({ corrections: 1, canUndo: false });
    expect(() => live.correct(2000, 1)).toThrow(/frame 2000 is not recorded \(0\.\.1999\)/);
  });
});
