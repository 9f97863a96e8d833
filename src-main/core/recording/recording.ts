import type { RecordingOrigin, RecordingSummary } from '../../../src-shared/api/session-state';
import { KnobError } from '../../../src-shared/errors';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { SlidingWindowCalibration } from '../../../src-shared/metrics/streaming';
import type { GateReplayer, ReplayOutput } from '../../../src-shared/trace/replay';
import { pushFrameToWindow } from '../../../src-shared/trace/rolling-series';
import { appliedConditions } from '../../../src-shared/trace/condition-switches';
import { UNKNOWN_LABEL, type Trace } from '../../../src-shared/trace/trace';
import { TraceBuilder, type BatchMetadata } from '../../../src-shared/trace/trace-builder';
import { copyReplayOutput, sliceTrace } from '../../../src-shared/trace/trace-slice';
import type { Calibrator } from '../../../src-shared/calibrators/output-calibrator';
import {
  appliedCondition,
  createConditionHysteresis,
  resetConditionHysteresis,
} from '../../../src-shared/calibrators/condition-hysteresis';
import type { GateMode } from '../../../src-shared/gate/gate-settings';
import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import type { StoredProvenance } from '../report/provenance';
import type { LiveDriftWatch } from './live-drift-watch';
import { FrameImageRing, type FrameImage } from './frame-image-ring';
import { LabelLayers, type LabelEdit } from '../../../src-shared/labels/label-layers';
import { keptClassesText } from '../../../src-shared/metrics/kept-class-bounds';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';

/**
 * The current recording: the trace (what the model said about each frame) with the run's outputs,
 * its labels, and what is derived from them for the live views. It is the only path through which
 * labels change, so the rolling figures and every later metric see a label the moment it is given.
 *
 * A live recording grows frame by frame (the live pipeline appends, stepping the gate); an offline
 * run's and a loaded trace's are complete. Every recording has a label column (operator feedback
 * on unlabelled streams). `unsaved` is true once frames or labels exist that no file holds.
 */
export const ROLLING_WINDOW_FRAMES = 300;

export interface RecordingOptions {
  id: number;
  origin: RecordingOrigin;
  description: string;
  /** Model, source, schedule and seed the trace was made with (reports show it; trace files keep it). */
  provenance: StoredProvenance;
  /** The output calibrator of the rolling figures (the views' one). */
  calibrator?: Calibrator | null;
  /** The gate's mode, for a condition-aware calibrator's hysteresis (setCalibrator); continuous by default. */
  gateMode?: GateMode;
  path?: string | null;
}

export class Recording {
  readonly id: number;
  readonly origin: RecordingOrigin;
  readonly description: string;
  readonly provenance: StoredProvenance;
  path: string | null;
  framesDropped = 0;
  private readonly builder: TraceBuilder | null;
  private readonly fixed: { trace: Trace; output: ReplayOutput } | null;
  private readonly images: FrameImageRing | null;
  private window!: SlidingWindowCalibration;
  /** The truth and the operator's corrections (label-layers.ts); trace.labels is their effective column. */
  private readonly layers: LabelLayers;
  private labelled = 0;
  private changedSinceSave: boolean;
  /** Counts changes (frames, labels): a copy taken at one revision saves only that revision. */
  revision = 0;
  private readonly fused: Float64Array;
  private readonly probabilities: Float64Array;

  private constructor(
    options: RecordingOptions,
    source: { builder: TraceBuilder; images: FrameImageRing } | { trace: Trace; output: ReplayOutput },
  ) {
    this.id = options.id;
    this.origin = options.origin;
    this.description = options.description;
    this.provenance = structuredClone(options.provenance);
    this.calibrator = options.calibrator ?? null;
    this.conditionMode = options.gateMode ?? 'continuous';
    this.path = options.path ?? null;
    this.builder = 'builder' in source ? source.builder : null;
    this.images = 'builder' in source ? source.images : null;
    this.fixed = 'builder' in source ? null : source;
    const saved = 'builder' in source ? undefined : source.trace.labelLayers;
    this.layers =
      saved === undefined
        ? new LabelLayers(this.trace.frameCount, this.trace.labels)
        : new LabelLayers(this.trace.frameCount, saved.truth, saved);
    const k = this.trace.classCount;
    this.fused = new Float64Array(k);
    this.probabilities = new Float64Array(k);
    this.changedSinceSave = options.origin === 'offline' && this.trace.frameCount > 0;
    this.replayConditions();
    this.recountLabels();
  }

  /** An empty recording that the live pipeline fills. */
  static live(
    options: Omit<RecordingOptions, 'origin'>,
    model: { classCount: number; labelNames: string[]; input: { width: number; height: number; channels: 1 | 3 } },
    nominalFrameRateHz: number,
    featureWidth: number | null = null,
  ): Recording {
    const builder = new TraceBuilder(
      model.classCount,
      model.labelNames,
      1 / nominalFrameRateHz,
      true,
      1024,
      featureWidth,
    );
    return new Recording({ ...options, origin: 'live' }, { builder, images: new FrameImageRing(model.input) });
  }

  /** A complete recording: an offline run's result, or a loaded trace with its run's outputs. */
  static complete(options: RecordingOptions, trace: Trace, output: ReplayOutput): Recording {
    const labels = trace.labels ?? new Int32Array(trace.frameCount).fill(UNKNOWN_LABEL);
    return new Recording(options, { trace: { ...trace, labels }, output });
  }

  get trace(): Trace {
    return this.builder?.trace ?? this.fixed!.trace;
  }

  get output(): ReplayOutput {
    return this.builder?.output ?? this.fixed!.output;
  }

  get frameCount(): number {
    return this.trace.frameCount;
  }

  get labelledFrameCount(): number {
    return this.labelled;
  }

  get unsaved(): boolean {
    return this.changedSinceSave;
  }

  /** Only a live recording grows; the others are complete. */
  get appendable(): boolean {
    return this.builder !== null;
  }

  summary(): RecordingSummary {
    return {
      id: this.id,
      origin: this.origin,
      description: this.description,
      frameCount: this.frameCount,
      labelledFrameCount: this.labelled,
      framesDropped: this.framesDropped,
      unsaved: this.changedSinceSave,
      path: this.path,
      featureWidth: this.trace.features?.width ?? null,
      ...(this.trace.keptClasses === undefined
        ? {}
        : { keptClasses: keptClassesText({ keep: this.trace.keptClasses.keep, classCount: this.trace.classCount }) }),
      labels: this.layers.counted(),
    };
  }

  /** The live source's identity, known only once it captures (a camera's device): the provenance names it. */
  noteSourceIdentity(identity: NonNullable<StoredProvenance['sourceIdentity']>): void {
    this.provenance.sourceIdentity = structuredClone(identity);
  }

  /** A label file was imported into the recording: the provenance names it. */
  noteLabelImport(entry: StoredProvenance['labelImports'][number]): void {
    this.provenance.labelImports.push(structuredClone(entry));
  }

  /**
   * The drift monitor watching this recording's frames as they are recorded (field.watchLive), or
   * null; its alarms stay here after it stops, and a saved trace keeps them.
   */
  driftWatch: LiveDriftWatch | null = null;
  /** Told when a drift watch's alarms come back from its thread (the live stream, to send them). */
  onDriftAlarms: (() => void) | null = null;

  /**
   * What a trace file of this recording's first `frameCount` frames keeps besides its columns: its
   * provenance, and its live drift watch with the alarms of those frames.
   */
  fileContext(frameCount: number): Record<string, unknown> {
    return {
      provenance: this.provenance,
      ...(this.driftWatch === null ? {} : { driftWatch: this.driftWatch.record(frameCount) }),
    };
  }

  /** A live recording's corruption schedule changes from frame `fromFrame` on (its provenance says so). */
  noteSchedule(fromFrame: number, schedule: CorruptionSchedule, seed: number): void {
    const history = (this.provenance.schedule ??= []);
    while (history.length > 0 && history[history.length - 1].fromFrame >= fromFrame) history.pop();
    history.push({ fromFrame, schedule: structuredClone(schedule), seed });
  }

  /**
   * Appends one frame of model outputs to a live recording and steps the gate over it with
   * `replayer` (the same code as a batch replay, so live and replayed outputs are bit-identical).
   */
  appendFrame(
    outputs: { zStatic: Float32Array; zDyn: Float32Array; uRef: Float32Array; features: Float32Array | null },
    timestamp: Float64Array,
    label: Int32Array,
    metadata: BatchMetadata,
    replayer: GateReplayer,
    image: Uint8Array,
  ): number {
    if (this.builder === null || this.images === null)
      throw new KnobError('NOT_AVAILABLE', `recording ${this.id} is complete`);
    const index = this.builder.append(
      1,
      outputs.zStatic,
      outputs.zDyn,
      outputs.uRef,
      timestamp,
      label,
      metadata,
      outputs.features,
    );
    replayer.advance(this.builder.trace, index, index + 1, this.builder.output);
    const output = this.builder.output;
    this.driftWatch?.step(this.builder.trace, index, output.g[index]!, replayer.currentSettings);
    this.images.keep(index, image);
    this.changedSinceSave = true;
    this.revision++;
    this.layers.append(label[0]!);
    // every frame moves a condition-aware calibrator's hysteresis, labelled or not
    const condition = this.conditionOfNext(index);
    if (condition !== undefined) this.conditionTrack.push(condition);
    if (label[0] !== UNKNOWN_LABEL) {
      this.labelled++;
      this.pushToWindow(index, condition);
    }
    return index;
  }

  /**
   * The operator's class for a recorded frame (-1 takes the correction away): a layer over the
   * truth, never into it, undoable. Returns the frame's labels after it.
   */
  correctLabel(frame: number, label: number): LabelEdit {
    const trace = this.trace;
    // a kept-class trace keeps each labelled frame's label among its classes: another may not be
    requireEveryClass(trace, 'labelling frames');
    if (!(Number.isInteger(label) && label >= UNKNOWN_LABEL && label < trace.classCount)) {
      throw new KnobError(
        'INVALID_INPUT',
        `label ${label} is not a class index (0..${trace.classCount - 1}, or -1 to clear)`,
      );
    }
    return this.labelsChanged(this.layers.correct(frame, label));
  }

  /** Takes the last correction back; null (and nothing changed, nothing to save) when there is none. */
  undoLabel(): LabelEdit | null {
    const edit = this.layers.undo();
    return edit === null ? null : this.labelsChanged(edit);
  }

  redoLabel(): LabelEdit | null {
    const edit = this.layers.redo();
    return edit === null ? null : this.labelsChanged(edit);
  }

  /** Whether the metrics read the operator's corrections over the truth (a visible choice). */
  useCorrections(use: boolean): void {
    if (this.layers.useCorrections === use) return;
    // a kept-class trace kept the labels that counted when it was compacted: the other layer's may not be kept
    requireEveryClass(this.trace, 'changing which labels count');
    this.layers.useCorrections = use;
    this.layers.effectiveInto(this.trace.labels!);
    this.labelsChanged(null);
  }

  /** Imported labels as the truth of frames the source left unlabelled (never over the source's). */
  importLabels(frames: Int32Array, classIndices: Int32Array, where: string): void {
    requireEveryClass(this.trace, 'importing labels');
    this.layers.importTruth(frames, classIndices, where);
    this.layers.effectiveInto(this.trace.labels!);
    this.labelsChanged(null);
  }

  labelsOf(frame: number): LabelEdit {
    return this.layers.at(frame);
  }

  private labelsChanged<T extends LabelEdit | null>(edit: T): T {
    if (edit !== null) this.trace.labels![edit.frame] = edit.effective;
    this.changedSinceSave = true;
    this.revision++;
    this.recountLabels();
    return edit;
  }

  /** Exact accuracy and mean confidence of the fused output over the last labelled frames. */
  rolling(): MetricValue[] {
    return this.window.accumulator.accuracyAndConfidence(`last ${this.window.sampleCount} labelled frames`);
  }

  /** The frame as the model saw it, while the live recording still keeps it. */
  image(frame: number): FrameImage | null {
    return this.images?.image(frame) ?? null;
  }

  /** A copy of the trace and outputs, owned by the caller (a transfer to a worker, an export). */
  copy(): { trace: Trace; output: ReplayOutput } {
    const { trace, output } = this.frozen();
    return {
      trace: sliceTrace(trace, 0, trace.frameCount, 'copy'),
      output: copyReplayOutput(output, trace.frameCount),
    };
  }

  /**
   * The trace and outputs as of now, for writing a file without a second copy of the recording
   * (an hour at 1,000 classes is 826 MiB): the recorded frames' columns as views, since a recorded
   * frame never changes (a growing recording writes past them, and reallocates rather than writes
   * over them), and the labels and label layers copied, since they change anywhere.
   */
  frozen(): { trace: Trace; output: ReplayOutput } {
    const n = this.frameCount;
    const counts = this.layers.counted();
    const layered = counts.imported > 0 || counts.corrections > 0 || !counts.useCorrections;
    // the layers as they are now, never those the trace was loaded with (a correction since
    // taken away would come back)
    const { labelLayers: loadedLayers, ...view } = sliceTrace(this.trace, 0, n, 'view');
    void loadedLayers;
    const o = this.output;
    return {
      trace: {
        ...view,
        labels: view.labels?.slice() ?? null,
        ...(layered ? { labelLayers: this.layers.columns(n) } : {}),
      },
      output: {
        g: o.g.subarray(0, n),
        v: o.v.subarray(0, n),
        top1: o.top1.subarray(0, n),
        confidence: o.confidence.subarray(0, n),
        fusedLogits: null,
        settingsVersion: o.settingsVersion.subarray(0, n),
        clampedInputs: o.clampedInputs,
      },
    };
  }

  /**
   * The trace as copy() gives it (its labels as of now), but with columns in shared memory (a
   * loaded trace's logits, which never change) viewed rather than copied: what a tune's threads
   * read (an hour at 1,000 classes is 826 MiB of them).
   */
  copySharing(): Trace {
    return sliceTrace(this.frozen().trace, 0, this.frameCount, 'share');
  }

  /**
   * The whole trace for the metrics worker (RecordingSource): columns in shared memory (a loaded
   * trace's logits) as they are, the rest copied.
   */
  copyAll(): Trace {
    return sliceTrace(this.trace, 0, this.frameCount, 'share');
  }

  /** Copies of frames [from, now) and every frame's effective label, for the metrics worker (RecordingSource). */
  copyFrom(from: number): { rows: Trace; labels: Int32Array | null } {
    const n = this.frameCount;
    const { labels } = this.trace;
    return { rows: sliceTrace(this.trace, from, n, 'copy'), labels: labels === null ? null : labels.slice(0, n) };
  }

  /** Saved to `path` as of `revision` (default: now); a change made since keeps it unsaved. */
  markSaved(path: string, revision = this.revision): void {
    this.path = path;
    this.changedSinceSave = revision !== this.revision;
  }

  /** The recent run that holds this recording (kept again under the same id when it changes). */
  keptAs: string | null = null;

  markKept(id: string, path: string, revision = this.revision): void {
    this.keptAs = id;
    this.markSaved(path, revision);
  }

  /**
   * The output calibrator of the rolling figures (the views' one); they are recomputed with it, so
   * rolling accuracy and confidence describe the output as the views show it. `mode`: the gate's,
   * which says whether a condition-aware calibrator's hysteresis runs over the recording as one
   * stream (condition-hysteresis.ts).
   */
  setCalibrator(calibrator: Calibrator | null, mode: GateMode = this.conditionMode): void {
    this.calibrator = calibrator;
    this.conditionMode = mode;
    this.replayConditions();
    this.recountLabels();
  }

  /**
   * The live stream restarted (the operator's reset, as the gate's state): the next frame applies
   * its own detected condition, as the live readout does.
   */
  restartConditionStream(): void {
    resetConditionHysteresis(this.conditionState);
  }

  private calibrator: Calibrator | null = null;
  private conditionMode: GateMode = 'continuous';
  private readonly conditionState = createConditionHysteresis();
  /** The condition applied to each recorded frame (a condition-aware calibrator; empty otherwise). */
  private conditionTrack: number[] = [];

  /**
   * The applied conditions from the recording's first frame, the recording walked as one stream
   * (as the views' replay walks it), computed once a calibrator or mode: a label edit reuses them.
   */
  private replayConditions(): void {
    resetConditionHysteresis(this.conditionState);
    const { trace, frameCount, calibrator, conditionMode, conditionState } = this;
    this.conditionTrack = Array.from(
      appliedConditions(trace, frameCount, calibrator, conditionMode, conditionState) ?? [],
    );
  }

  /** The condition the calibrator applies to `frame`, the next of the stream (none: undefined). */
  private conditionOfNext(frame: number): number | undefined {
    const choice = this.calibrator?.condition;
    const features = this.trace.features;
    if (choice === undefined || features === undefined) return undefined;
    const stream = this.conditionMode === 'continuous' ? this.conditionState : null;
    return appliedCondition(choice, stream, features.values, frame * features.width);
  }

  /** Label count and rolling window from scratch: after a label changed anywhere in the recording. */
  private recountLabels(): void {
    const labels = this.trace.labels!;
    const n = this.frameCount;
    let count = 0;
    for (let i = 0; i < n; i++) if (labels[i] !== UNKNOWN_LABEL) count++;
    this.labelled = count;
    this.window = new SlidingWindowCalibration(ROLLING_WINDOW_FRAMES, { classCount: this.trace.classCount });
    // a kept-class trace has no probability rows: its rolling figures stay empty (rollingSeries)
    if (this.trace.keptClasses !== undefined) return;
    const recent: number[] = [];
    for (let i = n - 1; i >= 0 && recent.length < ROLLING_WINDOW_FRAMES; i--)
      if (labels[i] !== UNKNOWN_LABEL) recent.push(i);
    for (let j = recent.length - 1; j >= 0; j--) this.pushToWindow(recent[j], this.conditionTrack[recent[j]]);
  }

  /** The fused probabilities of a frame at the gate value it was recorded with, into the rolling window. */
  private pushToWindow(frame: number, condition: number | undefined): void {
    pushFrameToWindow(
      this.window,
      this.trace,
      frame,
      this.output.g[frame],
      this.trace.labels![frame],
      this.calibrator,
      this.fused,
      this.probabilities,
      condition,
    );
  }
}
