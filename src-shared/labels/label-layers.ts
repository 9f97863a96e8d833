import { KnobError } from '../errors';

/**
 * A recording's labels in layers (issue 27): the truth (the source's own labels, or labels
 * imported from a file for frames the source left unlabelled) and the operator's corrections, a
 * layer of its own that never overwrites the truth. Which labels the metrics read is a visible
 * choice: the truth alone, or the truth with the corrections over it. Corrections have undo and
 * redo. The effective column (what every metric reads, the trace's `labels`) is kept in step here.
 */
export const LABEL_ORIGINS = ['none', 'source', 'imported'] as const;
export type LabelOrigin = (typeof LABEL_ORIGINS)[number];
const ORIGIN_CODE: Record<LabelOrigin, number> = { none: 0, source: 1, imported: 2 };

export const NO_LABEL = -1;

/** The layers as columns (what a trace file keeps: label = truth, label_origin, operator_label). */
export interface LabelLayerColumns {
  truth: Int32Array;
  /** LABEL_ORIGINS index per frame. */
  origin: Uint8Array;
  /** The operator's class per frame, NO_LABEL where there is no correction. */
  operator: Int32Array;
  /** Whether the metrics read the corrections over the truth. */
  useCorrections: boolean;
}

interface Edit {
  frame: number;
  before: number;
  after: number;
}

/** One correction step, what undo and redo report: the frame and its labels after the step. */
export interface LabelEdit {
  frame: number;
  truth: number;
  correction: number;
  effective: number;
}

export interface LabelCounts {
  fromSource: number;
  imported: number;
  corrections: number;
  useCorrections: boolean;
  canUndo: boolean;
  canRedo: boolean;
}

const MAX_UNDO = 10_000;

function grown<T extends Int32Array | Uint8Array>(array: T, length: number, fill: number): T {
  if (array.length >= length) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(length, array.length * 2, 1024));
  next.set(array);
  next.fill(fill, array.length);
  return next;
}

export class LabelLayers {
  private truth: Int32Array;
  private origin: Uint8Array;
  private operator: Int32Array;
  private length: number;
  private undoStack: Edit[] = [];
  private redoStack: Edit[] = [];
  private counts = { fromSource: 0, imported: 0, corrections: 0 };
  useCorrections: boolean;

  /**
   * Layers over `frameCount` frames. `truth` are the source's labels (NO_LABEL where none); a
   * trace file's columns restore the origin and the corrections too.
   */
  constructor(
    frameCount: number,
    truth: Int32Array | null,
    saved?: Pick<LabelLayerColumns, 'origin' | 'operator' | 'useCorrections'>,
  ) {
    this.length = frameCount;
    this.truth = new Int32Array(Math.max(frameCount, 1)).fill(NO_LABEL);
    this.origin = new Uint8Array(Math.max(frameCount, 1));
    this.operator = new Int32Array(Math.max(frameCount, 1)).fill(NO_LABEL);
    if (truth !== null) this.truth.set(truth.subarray(0, frameCount));
    for (let i = 0; i < frameCount; i++) {
      const code = saved?.origin[i] ?? (this.truth[i] === NO_LABEL ? 0 : ORIGIN_CODE.source);
      this.origin[i] = this.truth[i] === NO_LABEL ? 0 : code === 0 ? ORIGIN_CODE.source : code;
      if (saved !== undefined) this.operator[i] = saved.operator[i] ?? NO_LABEL;
    }
    this.useCorrections = saved?.useCorrections ?? true;
    this.recount();
  }

  get frameCount(): number {
    return this.length;
  }

  /** A new frame of a live recording with the source's label (NO_LABEL for none): its effective label. */
  append(sourceLabel: number): number {
    const i = this.length++;
    this.truth = grown(this.truth, this.length, NO_LABEL);
    this.origin = grown(this.origin, this.length, 0);
    this.operator = grown(this.operator, this.length, NO_LABEL);
    this.truth[i] = sourceLabel;
    this.origin[i] = sourceLabel === NO_LABEL ? 0 : ORIGIN_CODE.source;
    this.operator[i] = NO_LABEL;
    if (sourceLabel !== NO_LABEL) this.counts.fromSource++;
    return sourceLabel;
  }

  effective(frame: number): number {
    const correction = this.operator[frame]!;
    return this.useCorrections && correction !== NO_LABEL ? correction : this.truth[frame]!;
  }

  /** The effective labels of every frame into `labels` (the trace's column). */
  effectiveInto(labels: Int32Array): void {
    for (let i = 0; i < this.length; i++) labels[i] = this.effective(i);
  }

  at(frame: number): LabelEdit {
    this.checkFrame(frame);
    return {
      frame,
      truth: this.truth[frame]!,
      correction: this.operator[frame]!,
      effective: this.effective(frame),
    };
  }

  originOf(frame: number): LabelOrigin {
    return LABEL_ORIGINS[this.origin[frame]!]!;
  }

  /** The operator's class for a frame (NO_LABEL takes the correction away): an undoable step. */
  correct(frame: number, classIndex: number): LabelEdit {
    this.checkFrame(frame);
    const before = this.operator[frame]!;
    if (before === classIndex) return this.at(frame);
    this.apply({ frame, before, after: classIndex }, 'after');
    this.undoStack.push({ frame, before, after: classIndex });
    if (this.undoStack.length > MAX_UNDO) this.undoStack.shift();
    this.redoStack = [];
    return this.at(frame);
  }

  /** Takes back the last correction; null when there is none. */
  undo(): LabelEdit | null {
    return this.move(this.undoStack, this.redoStack, 'before');
  }

  redo(): LabelEdit | null {
    return this.move(this.redoStack, this.undoStack, 'after');
  }

  /** Undo and redo: the last edit of `from` set to its `side` and moved onto `to`; null when none. */
  private move(from: Edit[], to: Edit[], side: 'before' | 'after'): LabelEdit | null {
    const edit = from.pop();
    if (edit === undefined) return null;
    this.apply(edit, side);
    to.push(edit);
    return this.at(edit.frame);
  }

  /**
   * Labels imported from a file become the truth of frames the source left unlabelled. A frame the
   * source labelled is never overwritten: the import is refused, naming how many and the first.
   */
  importTruth(frames: Int32Array, classIndices: Int32Array, where: string): void {
    let conflicts = 0;
    let first = -1;
    for (let j = 0; j < frames.length; j++) {
      const frame = frames[j]!;
      this.checkFrame(frame);
      if (this.origin[frame] === ORIGIN_CODE.source && this.truth[frame] !== classIndices[j]) {
        conflicts++;
        if (first < 0) first = frame;
      }
    }
    if (conflicts > 0)
      throw new KnobError(
        'INVALID_INPUT',
        `${where}: ${conflicts} frames (the first ${first}) already have the source's own label, which an import never replaces; correct them as the operator instead`,
      );
    for (let j = 0; j < frames.length; j++) {
      const frame = frames[j]!;
      if (this.origin[frame] === ORIGIN_CODE.source) continue;
      this.truth[frame] = classIndices[j]!;
      this.origin[frame] = ORIGIN_CODE.imported;
    }
    this.recount();
  }

  counted(): LabelCounts {
    return {
      ...this.counts,
      useCorrections: this.useCorrections,
      canUndo: this.undoStack.length > 0,
      canRedo: this.redoStack.length > 0,
    };
  }

  /** The columns of frames [0, frameCount), copied (for a trace file). */
  columns(frameCount = this.length): LabelLayerColumns {
    return {
      truth: this.truth.slice(0, frameCount),
      origin: this.origin.slice(0, frameCount),
      operator: this.operator.slice(0, frameCount),
      useCorrections: this.useCorrections,
    };
  }

  private apply(edit: Edit, side: 'before' | 'after'): void {
    const value = edit[side];
    const previous = this.operator[edit.frame]!;
    this.operator[edit.frame] = value;
    this.counts.corrections += (value !== NO_LABEL ? 1 : 0) - (previous !== NO_LABEL ? 1 : 0);
  }

  private recount(): void {
    let fromSource = 0;
    let imported = 0;
    let corrections = 0;
    for (let i = 0; i < this.length; i++) {
      if (this.origin[i] === ORIGIN_CODE.source) fromSource++;
      else if (this.origin[i] === ORIGIN_CODE.imported) imported++;
      if (this.operator[i] !== NO_LABEL) corrections++;
    }
    this.counts = { fromSource, imported, corrections };
  }

  private checkFrame(frame: number): void {
    if (!(Number.isInteger(frame) && frame >= 0 && frame < this.length))
      throw new KnobError('INVALID_INPUT', `frame ${frame} is not recorded (0..${this.length - 1})`);
  }
}
