import { compileCalibrator, describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import {
  labelLogitsOf,
  type FusedScoreTable,
  type FusedScoreTableParts,
} from '../../../src-shared/fusion/fused-score-table';
import type { TableRowsRequest } from '../metrics/table-rows';
import { runGate } from '../../../src-shared/gate/gate-kernel';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { createGateState } from '../../../src-shared/gate/gate-state';
import { EVERY_CLASS_MAX_CLASSES } from '../../../src-shared/metrics/metric-suite';
import {
  allocateTopLabelScores,
  topLabelOnlyScores,
  type ClassScores,
  type TopLabelScores,
} from '../../../src-shared/metrics/scores';
import { allocateReplayOutput, replay, type ReplayOutput } from '../../../src-shared/trace/replay';
import { validateTrace, type Trace } from '../../../src-shared/trace/trace';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import { topLabelTraceScores, type KeptClassScoring } from '../../../src-shared/trace/top-label-trace-scores';
import { labelledFrames, scoredFrames } from '../../../src-shared/trace/trace-scores';
import { sliceTrace } from '../../../src-shared/trace/trace-slice';
import type { TableProgress } from './held-recording';

/**
 * A recording replayed at one setting for the desk's views (metrics-snapshot.ts), by one of two
 * paths with the same figures:
 *  - full vectors: the K fused logits of every frame (replay.ts), scored by the metric suite's row
 *    pass; every view, any output calibrator.
 *  - a knob turn with many classes (issue 29): the gate alone, then each frame's top-1,
 *    confidence, NLL and Brier terms from the recording's fused-score table in O(1) a frame
 *    (fused-score-table.ts, equal to the full vectors within 1e-12); the scores then hold no
 *    probabilities, so what reads every class (classwise metrics, per-class diagrams) is left out
 *    and marked. Taken when the source has tables, the classes exceed EVERY_CLASS_MAX_CLASSES, the
 *    caller did not ask for every class, and the output calibrator is none or a temperature.
 * A kept-class trace (kept-classes.ts) has a third: its top-label estimates from the kept classes,
 * each frame with its bounds against the full trace (top-label-trace-scores.ts, as `knob metrics
 * --trace` scores it), and nothing that reads every class or a calibrator.
 */
export interface TraceSource {
  view(): Trace;
  /** The fused-score table of every frame at `temperature` (absent: views fuse the K logits). */
  table?(temperature: number, squares: boolean, onProgress?: TableProgress, signal?: CancelSignal): FusedScoreTable;
  /**
   * A buffer of at least `length` values kept between views (ViewOptions.scratch): a knob turn on
   * a long recording then faults in no fresh n x K pages (a third of a ten-class knob turn on 10 h).
   */
  scratch?: (length: number) => Float64Array;
  /**
   * The table at `temperature` made whole with the help of another thread (`share` builds rows of
   * it there), before a view reads it (HeldRecording.tableOnTwoThreads).
   */
  tableOnTwoThreads?(
    temperature: number,
    squares: boolean,
    share: (request: TableRowsRequest) => Promise<FusedScoreTableParts>,
    onProgress?: TableProgress,
    signal?: CancelSignal,
  ): Promise<void>;
}

/** A trace with no tables: its views fuse the K logits. */
export const plainSource = (trace: Trace): TraceSource => ({ view: () => trace });

/** A trace replayed at one setting, with the scores of its labelled frames. */
export interface Replayed {
  trace: Trace;
  window: string;
  /** The labelled frames, as indices of `trace` (the window). */
  frames: Int32Array;
  output: ReplayOutput;
  scores: ClassScores | null;
  top: TopLabelScores | null;
  /** False when the scores hold no probabilities (the table path): nothing reads every class. */
  everyClass: boolean;
  /** Set for a kept-class trace: the scores are its estimates, and how far the full trace's may lie. */
  kept?: KeptClassScoring;
}

/** The last `lastFrames` frames of a trace (all when absent), as a trace of its own. */
export function windowOf(trace: Trace, lastFrames: number | undefined): Trace {
  if (lastFrames === undefined || lastFrames >= trace.frameCount) return trace;
  return sliceTrace(trace, trace.frameCount - lastFrames, trace.frameCount, 'view');
}

/** The temperature of a calibrator the tables can stand in for (none: 1), or null. */
function tableTemperature(calibrator: CalibratorSpec | null): number | null {
  if (calibrator === null) return 1;
  return calibrator.method === 'temperature' ? calibrator.temperature : null;
}

/** How a view is replayed (replayedView). */
export interface ViewOptions {
  /** The output calibrator applied after fusion (none: null). */
  calibrator?: CalibratorSpec | null;
  /**
   * 'auto': the table path when it applies (above); 'all': full vectors; 'logits': full vectors
   * and the scores keep the fused logits (a calibrator's fit). Otherwise the probabilities are
   * written over the fused logits, and neither the output nor the scores keep them.
   */
  everyClass?: 'auto' | 'all' | 'logits';
  /** Progress of a table being built (the first view of a long recording). */
  onProgress?: TableProgress;
  /** Polled while a table is built: a cancelled view stops with CANCELLED. */
  signal?: CancelSignal;
  /**
   * A buffer of at least `length` values the caller keeps between views, for the full-vector
   * path's n x K fused logits (then probabilities): valid until the caller's next view, so only
   * for a view whose result keeps no typed array of it (a snapshot). Absent: a new array.
   */
  scratch?: (length: number) => Float64Array;
}

/**
 * The temperature of the fused-score table a view with `options` reads (the knob-turn path above),
 * or null when it fuses the K logits (a view a caller may prepare the table for: the metrics
 * worker builds a long recording's first one on two threads).
 */
export function tablePathTemperature(source: TraceSource, recorded: Trace, options: ViewOptions): number | null {
  const temperature = tableTemperature(options.calibrator ?? null);
  const tabled =
    source.table !== undefined &&
    recorded.keptClasses === undefined &&
    (options.everyClass ?? 'auto') === 'auto' &&
    recorded.classCount > EVERY_CLASS_MAX_CLASSES;
  return tabled ? temperature : null;
}

export function replayedView(
  source: TraceSource,
  settings: GateSettings,
  lastFrames: number | undefined,
  options: ViewOptions = {},
): Replayed {
  const { calibrator = null, everyClass = 'auto', onProgress, scratch, signal } = options;
  const recorded = source.view();
  const trace = windowOf(recorded, lastFrames);
  const window = trace === recorded ? 'all recorded frames' : `last ${trace.frameCount} recorded frames`;
  const frames = labelledFrames(trace);
  if (recorded.keptClasses !== undefined) return keptView(trace, window, frames, settings, calibrator, everyClass);
  const temperature = tablePathTemperature(source, recorded, options);
  if (temperature !== null)
    return tableView(source, recorded, trace, window, frames, settings, temperature, onProgress, signal);
  const fusedLength = frames.length > 0 && everyClass !== 'logits' ? trace.frameCount * trace.classCount : 0;
  // every frame scored, uncalibrated: the confidence comes from the scores' pass (one exp per class)
  const confidenceFromScores = frames.length === trace.frameCount && calibrator === null;
  const output = replay(trace, settings, {
    keepFusedLogits: frames.length > 0,
    ...(scratch === undefined || fusedLength === 0 ? {} : { fusedLogitsInto: scratch(fusedLength) }),
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
    confidence: !confidenceFromScores,
  });
  if (frames.length === 0) return { trace, window, frames, output, scores: null, top: null, everyClass: true };
  const overwrite = everyClass !== 'logits';
  const { scores, top } = scoredFrames(trace, output.fusedLogits!, frames, overwrite);
  if (confidenceFromScores) output.confidence.set(top.confidence);
  if (overwrite) output.fusedLogits = null;
  return { trace, window, frames, output, scores, top, everyClass: true };
}

/** A kept-class trace's view: its estimates and their bounds (see above). */
function keptView(
  trace: Trace,
  window: string,
  frames: Int32Array,
  settings: GateSettings,
  calibrator: CalibratorSpec | null,
  everyClass: NonNullable<ViewOptions['everyClass']>,
): Replayed {
  if (calibrator !== null) requireEveryClass(trace, `the output calibrator (${describeCalibrator(calibrator)})`);
  if (everyClass !== 'auto') requireEveryClass(trace, "every class's metrics");
  const output = replay(trace, settings, { logits: 'kept classes too' });
  if (frames.length === 0) return { trace, window, frames, output, scores: null, top: null, everyClass: false };
  const { scores, top, kept } = topLabelTraceScores(trace, output.g, frames);
  return { trace, window, frames, output, scores, top, everyClass: false, kept };
}

/** The table path: the gate over the window, the rest from the table (see above). */
function tableView(
  source: TraceSource,
  recorded: Trace,
  trace: Trace,
  window: string,
  frames: Int32Array,
  settings: GateSettings,
  temperature: number,
  onProgress: TableProgress | undefined,
  signal: CancelSignal | undefined,
): Replayed {
  validateTrace(trace);
  const n = trace.frameCount;
  const offset = recorded.frameCount - n;
  const table = source.table!(temperature, true, onProgress, signal);
  const output = allocateReplayOutput(n, trace.classCount, false);
  output.clampedInputs = runGate(settings, trace, 0, n, createGateState(settings.g0), output);
  table.topInto(output.g, offset, offset + n, output.top1, output.confidence, offset);
  if (frames.length === 0) return { trace, window, frames, output, scores: null, top: null, everyClass: false };
  const m = frames.length;
  const labels = Int32Array.from(frames, (f) => trace.labels![f]!);
  const entries = Int32Array.from(frames, (f) => f + offset);
  const top = allocateTopLabelScores(m);
  const sampleNll = new Float64Array(m);
  const sampleBrier = new Float64Array(m);
  const labelLogits = labelLogitsOf(recorded, entries, labels);
  table.scoresInto(labelLogits, output.g, entries, labels, { ...top, sampleNll, sampleBrier }, undefined, offset);
  const scores = topLabelOnlyScores(trace.classCount, labels, sampleNll, sampleBrier);
  return { trace, window, frames, output, scores, top, everyClass: false };
}
