import {
  LABEL_FREE_METHOD_NAMES,
  LABEL_FREE_METHODS,
  labelFreeAccuracy,
  MIN_LABELLED_REFERENCE,
  type AccuracyEstimate,
  type LabelFreeMethod,
} from '../../../src-shared/drift';
import { basename } from 'node:path';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import { checkTraceRecordedWith } from '../recording/model-binding';
import { readTraceFile } from '../recording/trace-arrow';
import { storedProvenanceOf } from '../report/provenance';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { keptClassEstimateNote } from '../../../src-shared/trace/kept-classes';
import { replay } from '../../../src-shared/trace/replay';
import { frameRateHzOf, UNKNOWN_LABEL, type Trace } from '../../../src-shared/trace/trace';
import { REFERENCE_FRACTION } from './monitor-trace';

export type EstimateGrouping = 'severity' | 'window';

export interface EstimateAccuracyInput {
  trace: Trace;
  settings: GateSettings;
  /**
   * Labelled frames [start, end) the estimators are fitted on, of `referenceTrace` when given (null:
   * all of it), else of this recording (null: defaultReference).
   */
  reference: { start: number; end: number } | null;
  /**
   * Another recording of the same model to fit on (a labelled dataset's run), so a recording with
   * no labels at all gets estimates: then every frame of this one is estimated.
   */
  referenceTrace?: Trace | null;
  by: EstimateGrouping;
  /** Frames a window with `by: 'window'`; null: a minute of the recording's frames. */
  windowFrames: number | null;
  replicates: number;
  seed: number;
}

export interface EstimatedGroup {
  /** The severity, or the window's first frame. */
  key: string;
  firstFrame: number;
  frames: number;
  estimates: AccuracyEstimate[];
  /** Labelled frames in the group and their accuracy, when the labels are there to reveal. */
  labelledFrames: number;
  trueAccuracy: number | null;
}

export interface EstimateAccuracyResult {
  referenceStart: number;
  referenceEnd: number;
  referenceLabelledFrames: number;
  referenceAccuracy: number;
  by: EstimateGrouping;
  methods: Array<{ method: LabelFreeMethod; identity: string; assumption: string }>;
  groups: EstimatedGroup[];
  /** Over the groups with labels: each method's mean absolute error and how many intervals cover the truth. */
  summary: Array<{ method: LabelFreeMethod; meanAbsoluteError: number | null; covered: number; groups: number }>;
  /** Set on a kept-class trace: its confidences and top-1 are the kept-class estimates. */
  approximation?: string;
}

/**
 * Label-free accuracy estimates of a recording (`knob estimate`): the estimators (mean confidence,
 * ATC, DoC, calibrated confidence; src-shared/drift/label-free-accuracy.ts) fitted on the labelled
 * frames of a reference window, applied to each severity or window after it without reading its
 * labels; where the labels are there, each group also gets its true accuracy, so the estimates can
 * be judged (labels revealed afterwards).
 */
export function estimateAccuracyOfTrace(input: EstimateAccuracyInput): EstimateAccuracyResult {
  const { trace } = input;
  const n = trace.frameCount;
  if (input.by === 'severity' && trace.metadata.severity?.kind !== 'number')
    throw new KnobError('INVALID_INPUT', 'this recording has no severity column to group by: use windows');
  const source = input.referenceTrace ?? trace;
  if (source.classCount !== trace.classCount)
    throw new KnobError(
      'INVALID_INPUT',
      `the reference recording has ${source.classCount} classes and this one ${trace.classCount}: they are not of one model`,
    );
  const separate = source !== trace;
  const reference =
    input.reference ?? (separate ? { start: 0, end: source.frameCount } : defaultReference(trace, input.by));
  // within its own recording, the reference must leave frames after it to estimate
  if (reference.start < 0 || reference.end > source.frameCount || (!separate && reference.end >= n))
    throw new KnobError(
      'INVALID_INPUT',
      `the reference window ${reference.start}:${reference.end} must lie within the ${separate ? 'reference ' : ''}recording's ${source.frameCount} frames` +
        (separate ? '' : ' and leave frames after it'),
    );
  const labels = trace.labels;
  const referenceFrames: number[] = [];
  if (source.labels !== null)
    for (let i = reference.start; i < reference.end; i++)
      if (source.labels[i] !== UNKNOWN_LABEL) referenceFrames.push(i);
  if (referenceFrames.length < MIN_LABELLED_REFERENCE)
    throw new KnobError(
      'INVALID_INPUT',
      `the reference window ${reference.start}:${reference.end}${separate ? ' of the reference recording' : ''} has ${referenceFrames.length} labelled frames; the estimates are fitted on at least ${MIN_LABELLED_REFERENCE}`,
    );

  const replayed = replay(trace, input.settings, { logits: 'kept classes too' });
  const correct = (i: number) => (replayed.top1[i] === labels![i] ? 1 : 0);
  const referenceReplay = separate ? replay(source, input.settings, { logits: 'kept classes too' }) : replayed;
  const referenceData = {
    confidence: Float64Array.from(referenceFrames, (i) => referenceReplay.confidence[i]!),
    correct: Uint8Array.from(referenceFrames, (i) => (referenceReplay.top1[i] === source.labels![i] ? 1 : 0)),
  };
  const grouped = groupsAfter(trace, separate ? 0 : reference.end, input);
  // the bootstrap resamples the reference and the estimated frames (within one recording, its span from the reference on)
  const resampledFrames = separate ? n + reference.end - reference.start : n - reference.start;
  const resampled = input.replicates * resampledFrames;
  if (grouped.length > MAX_WINDOWS || resampled > MAX_RESAMPLED_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `${grouped.length} groups and ${input.replicates} replicates over ${resampledFrames} frames is more than this ` +
        `estimates at once (${MAX_WINDOWS} groups, ${MAX_RESAMPLED_FRAMES.toExponential(0)} resampled frames): use longer windows or fewer replicates`,
    );
  const estimates = labelFreeAccuracy(
    referenceData,
    grouped.map(({ frames }) => Float64Array.from(frames, (i) => replayed.confidence[i]!)),
    { replicates: input.replicates, seed: input.seed },
  );
  const groups: EstimatedGroup[] = grouped.map(({ key, frames }, g) => {
    let labelled = 0;
    let right = 0;
    if (labels !== null)
      for (const i of frames)
        if (labels[i] !== UNKNOWN_LABEL) {
          labelled++;
          right += correct(i);
        }
    return {
      key,
      firstFrame: frames[0]!,
      frames: frames.length,
      estimates: estimates[g]!,
      labelledFrames: labelled,
      trueAccuracy: labelled > 0 ? right / labelled : null,
    };
  });
  const judged = groups.filter((g) => g.trueAccuracy !== null);
  let referenceRight = 0;
  for (const c of referenceData.correct) referenceRight += c;
  return {
    referenceStart: reference.start,
    referenceEnd: reference.end,
    referenceLabelledFrames: referenceFrames.length,
    referenceAccuracy: referenceRight / referenceFrames.length,
    by: input.by,
    methods: LABEL_FREE_METHOD_NAMES.map((method) => ({ method, ...LABEL_FREE_METHODS[method] })),
    groups,
    summary: LABEL_FREE_METHOD_NAMES.map((method, m) => ({
      method,
      meanAbsoluteError:
        judged.length === 0
          ? null
          : judged.reduce((sum, g) => sum + Math.abs(g.estimates[m]!.value - g.trueAccuracy!), 0) / judged.length,
      covered: judged.filter((g) => g.estimates[m]!.low <= g.trueAccuracy! && g.trueAccuracy! <= g.estimates[m]!.high)
        .length,
      groups: judged.length,
    })),
    approximation:
      keptClassEstimateNote(trace) ??
      (separate && source.keptClasses !== undefined ? `the reference is ${keptClassEstimateNote(source)!}` : undefined),
  };
}

/**
 * A labelled recording to fit the estimators on (`--reference-trace`, the desk's reference trace),
 * read and refused when it was recorded with another model than `model` (estimators fitted on
 * another model's confidences are a silently wrong number); a trace that names no model passes.
 */
export async function readReferenceTrace(
  path: string,
  model: Pick<ModelDescription, 'paths' | 'sha256'> | null,
): Promise<Trace> {
  const file = await readTraceFile(path, undefined, 'kept classes too');
  if (model !== null) checkTraceRecordedWith(basename(path), storedProvenanceOf(file.context), model);
  return file.trace;
}

/**
 * The default reference: by severity, the frames before the severity first changes (the first
 * level alone, so no shifted frame is fitted on); by window, or a severity that never changes,
 * the first fifth of the recording.
 */
function defaultReference(trace: Trace, by: EstimateGrouping): { start: number; end: number } {
  const n = trace.frameCount;
  if (by === 'severity') {
    const severity = (trace.metadata.severity as { kind: 'number'; values: Float64Array }).values;
    let end = 1;
    while (end < n && severity[end] === severity[0]) end++;
    // one level throughout (or none readable): no clean stretch to tell apart, so the first fifth
    if (end < n && Number.isFinite(severity[0])) return { start: 0, end };
  }
  return { start: 0, end: Math.floor(n * REFERENCE_FRACTION) };
}

/** Windows a call may estimate, and resampled frames in all: past them it would run for minutes. */
export const MAX_WINDOWS = 5000;
export const MAX_RESAMPLED_FRAMES = 4e8;

/** The frames after the reference, by severity (in order of first appearance) or in windows. */
function groupsAfter(
  trace: Trace,
  from: number,
  input: EstimateAccuracyInput,
): Array<{ key: string; frames: number[] }> {
  const n = trace.frameCount;
  if (input.by === 'severity') {
    const severity = trace.metadata.severity as { kind: 'number'; values: Float64Array };
    const byKey = new Map<string, number[]>();
    for (let i = from; i < n; i++) {
      const key = String(severity.values[i]);
      let frames = byKey.get(key);
      if (frames === undefined) byKey.set(key, (frames = []));
      frames.push(i);
    }
    return [...byKey].map(([key, frames]) => ({ key, frames }));
  }
  const size = input.windowFrames ?? Math.max(1, Math.round(60 * frameRateHzOf(trace)));
  const out: Array<{ key: string; frames: number[] }> = [];
  for (let start = from; start < n; start += size) {
    const frames = Array.from({ length: Math.min(size, n - start) }, (_, j) => start + j);
    out.push({ key: String(start), frames });
  }
  return out;
}
