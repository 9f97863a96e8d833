import { KnobError } from '../errors';
import {
  allocateKeptClassLogits,
  checkKeptClassCount,
  keepLeadingClassesInto,
  mapKeptClassArrays,
} from './kept-classes';
import { allocateReplayOutput, type ReplayOutput } from './replay';
import { TRACE_FORMAT_VERSION, UNKNOWN_LABEL, type Trace } from './trace';
import { copyReplayOutput, sliceTrace } from './trace-slice';

/**
 * A Trace that grows as frames arrive (live streams, offline runs), with the replay output of the
 * run's settings growing beside it. Capacity doubles, so appending is amortised O(1) and the hot
 * path allocates nothing between growths. `trace` and `output` are stable objects whose columns are
 * swapped on growth and whose frameCount follows the appends, so a GateReplayer can advance on them.
 *
 * Metadata columns are fixed at creation: corruption (category), severity, continuous severity,
 * corruption seed and source frame index (numbers).
 *
 * With `keepClasses` the builder records a kept-class trace (kept-classes.ts) as frames arrive:
 * each batch's full rows are reduced to their leading classes and rest summaries on append and not
 * kept, so a recording holds 10 keep + 40 bytes of logits a frame whatever K, not 8 K (knob run --keep).
 */
export const METADATA_COLUMNS = ['severity', 'continuous_severity', 'corruption_seed', 'source_frame'] as const;
export type NumericMetadataName = (typeof METADATA_COLUMNS)[number];

/** Per-frame metadata of a batch, as columns the caller fills and reuses (no object per frame). */
export interface BatchMetadata {
  corruption: (string | null)[];
  severity: Float64Array;
  continuousSeverity: Float64Array;
  corruptionSeed: Float64Array;
  sourceFrame: Float64Array;
}

export function allocateBatchMetadata(capacity: number): BatchMetadata {
  return {
    corruption: new Array<string | null>(capacity).fill(null),
    severity: new Float64Array(capacity),
    continuousSeverity: new Float64Array(capacity),
    corruptionSeed: new Float64Array(capacity),
    sourceFrame: new Float64Array(capacity),
  };
}

function grown<T extends Float32Array | Float64Array | Int32Array | Uint32Array | Uint16Array>(
  array: T,
  length: number,
): T {
  const next = new (array.constructor as new (n: number) => T)(length);
  next.set(array);
  return next;
}

export class TraceBuilder {
  readonly trace: Trace;
  readonly output: ReplayOutput;
  private capacity: number;
  private readonly corruptionCodes = new Map<string, number>();

  /**
   * `featureWidth`: record the model's features (that many a frame); null records none.
   * `keepClasses`: record that many classes a frame (a kept-class trace); null records every class.
   */
  constructor(
    classCount: number,
    labelNames: string[],
    nominalDtSeconds: number,
    hasLabels: boolean,
    initialCapacity = 1024,
    featureWidth: number | null = null,
    keepClasses: number | null = null,
  ) {
    if (keepClasses !== null) checkKeptClassCount(keepClasses, classCount);
    this.capacity = Math.max(1, initialCapacity);
    const n = this.capacity;
    const kept = keepClasses !== null;
    this.trace = {
      formatVersion: TRACE_FORMAT_VERSION,
      frameCount: 0,
      classCount,
      timestampsSeconds: new Float64Array(n),
      zStatic: new Float32Array(kept ? 0 : n * classCount),
      zDyn: new Float32Array(kept ? 0 : n * classCount),
      ...(kept ? { keptClasses: allocateKeptClassLogits(n, keepClasses) } : {}),
      uRef: new Float32Array(n),
      labels: hasLabels ? new Int32Array(n).fill(UNKNOWN_LABEL) : null,
      labelNames,
      metadata: {
        corruption: { kind: 'category', codes: new Int32Array(n), dictionary: ['none'] },
        ...Object.fromEntries(
          METADATA_COLUMNS.map((name) => [name, { kind: 'number' as const, values: new Float64Array(n) }]),
        ),
      },
      nominalDtSeconds,
      ...(featureWidth === null
        ? {}
        : { features: { width: featureWidth, values: new Float32Array(n * featureWidth) } }),
    };
    this.corruptionCodes.set('none', 0);
    this.output = allocateReplayOutput(n, classCount, false);
  }

  get frameCount(): number {
    return this.trace.frameCount;
  }

  private ensureCapacity(frames: number): void {
    if (frames <= this.capacity) return;
    let next = this.capacity;
    while (next < frames) next *= 2;
    const t = this.trace;
    const k = t.classCount;
    t.timestampsSeconds = grown(t.timestampsSeconds, next);
    if (t.keptClasses === undefined) {
      t.zStatic = grown(t.zStatic, next * k);
      t.zDyn = grown(t.zDyn, next * k);
    } else t.keptClasses = mapKeptClassArrays(t.keptClasses, (array, perFrame) => grown(array, next * perFrame));
    t.uRef = grown(t.uRef, next);
    if (t.features !== undefined) t.features.values = grown(t.features.values, next * t.features.width);
    if (t.labels !== null) {
      const labels = grown(t.labels, next);
      labels.fill(UNKNOWN_LABEL, this.capacity);
      t.labels = labels;
    }
    for (const column of Object.values(t.metadata)) {
      if (column.kind === 'category') column.codes = grown(column.codes, next);
      else column.values = grown(column.values, next);
    }
    const o = this.output;
    o.g = grown(o.g, next);
    o.v = grown(o.v, next);
    o.top1 = grown(o.top1, next);
    o.confidence = grown(o.confidence, next);
    o.settingsVersion = grown(o.settingsVersion, next);
    this.capacity = next;
  }

  /**
   * Appends `count` frames: rows [0, count) of the branch arrays, timestamps, labels (-1 unknown)
   * and per-frame metadata, and their features when the trace records them (a batch without them
   * is refused: a recording with features has them for every frame). Returns the index of the first
   * appended frame.
   */
  append(
    count: number,
    zStatic: Float32Array,
    zDyn: Float32Array,
    uRef: Float32Array,
    timestampsSeconds: Float64Array,
    labels: Int32Array | null,
    metadata: BatchMetadata,
    features: Float32Array | null = null,
  ): number {
    const t = this.trace;
    const first = t.frameCount;
    const k = t.classCount;
    if (t.features !== undefined && (features === null || features.length < count * t.features.width))
      throw new KnobError(
        'INVALID_INPUT',
        `frames ${first}-${first + count - 1} came without the features this recording keeps`,
      );
    this.ensureCapacity(first + count);
    if (t.features !== undefined) {
      const width = t.features.width;
      t.features.values.set(features!.subarray(0, count * width), first * width);
    }
    if (t.keptClasses === undefined) {
      t.zStatic.set(zStatic.subarray(0, count * k), first * k);
      t.zDyn.set(zDyn.subarray(0, count * k), first * k);
    } else keepLeadingClassesInto({ zStatic, zDyn, labels }, count, k, t.keptClasses, first);
    t.uRef.set(uRef.subarray(0, count), first);
    t.timestampsSeconds.set(timestampsSeconds.subarray(0, count), first);
    if (t.labels !== null && labels !== null) t.labels.set(labels.subarray(0, count), first);
    const corruption = t.metadata.corruption;
    const numeric = (name: NumericMetadataName): Float64Array => (t.metadata[name] as { values: Float64Array }).values;
    for (let i = 0; i < count; i++) {
      if (corruption.kind === 'category') {
        const name = metadata.corruption[i] ?? 'none';
        let code = this.corruptionCodes.get(name);
        if (code === undefined) {
          code = corruption.dictionary.length;
          corruption.dictionary.push(name);
          this.corruptionCodes.set(name, code);
        }
        corruption.codes[first + i] = code;
      }
    }
    numeric('severity').set(metadata.severity.subarray(0, count), first);
    numeric('continuous_severity').set(metadata.continuousSeverity.subarray(0, count), first);
    numeric('corruption_seed').set(metadata.corruptionSeed.subarray(0, count), first);
    numeric('source_frame').set(metadata.sourceFrame.subarray(0, count), first);
    t.frameCount = first + count;
    return first;
  }

  /** Sets the label of an already appended frame (operator feedback on unlabelled streams). */
  setLabel(frame: number, label: number): void {
    if (this.trace.labels === null) throw new KnobError('INVALID_INPUT', 'this stream was opened without labels');
    if (!(Number.isInteger(frame) && frame >= 0 && frame < this.trace.frameCount))
      throw new KnobError('INVALID_INPUT', `frame ${frame} is not in the trace (0..${this.trace.frameCount - 1})`);
    if (!(Number.isInteger(label) && label >= UNKNOWN_LABEL && label < this.trace.classCount))
      throw new KnobError('INVALID_INPUT', `label ${label} is not a class index`);
    const kept = this.trace.keptClasses;
    if (
      kept !== undefined &&
      label !== UNKNOWN_LABEL &&
      !kept.classes.subarray(frame * kept.keep, (frame + 1) * kept.keep).includes(label)
    )
      throw new KnobError(
        'INVALID_INPUT',
        `frame ${frame} kept ${kept.keep} classes and not class ${label}: a kept-class recording takes a label only among them`,
      );
    this.trace.labels[frame] = label;
  }

  /** A trimmed copy: columns exactly frameCount long (for saving, and for replay elsewhere). */
  snapshot(): Trace {
    return sliceTrace(this.trace, 0, this.trace.frameCount, 'copy');
  }

  /** The run's outputs, trimmed to frameCount. */
  snapshotOutput(): ReplayOutput {
    return copyReplayOutput(this.output, this.trace.frameCount);
  }
}
