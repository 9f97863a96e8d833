import { KnobError } from '../../src-shared/errors';
import {
  scoresFromLogits,
  scoresFromProbabilities,
  type ClassScores,
  type TopLabelScores,
} from '../../src-shared/metrics/scores';
import { gateTrajectory, replay } from '../../src-shared/trace/replay';
import {
  conditionsOfFrames,
  featuresOfFrames,
  labelledFrames,
  labelledLogitRows,
  scoresOfFrames,
} from '../../src-shared/trace/trace-scores';
import type { LogitArray } from '../../src-shared/fusion/logits';
import { topLabelTraceScores, type KeptClassScoring } from '../../src-shared/trace/top-label-trace-scores';
import type { Trace } from '../../src-shared/trace/trace';
import type { GateSettings } from '../../src-shared/gate/gate-settings';
import { EVERY_CLASS_MAX_CLASSES } from '../../src-shared/metrics/metric-suite';
import type { RowConditions, RowFeatures } from '../../src-shared/calibrators/output-calibrator';
import { readNumericTable } from '../core/datasets/numeric-table';
import { readTraceFile } from '../core/recording/trace-arrow';
import type { ParallelMetricSuite } from '../core/metrics/parallel-metric-suite';
import { GATE_OPTIONS, positiveInteger, settingsOverTrace } from './cli-args';
import { DEFAULT_HYSTERESIS_FRAMES } from '../../src-shared/calibrators/conditional-calibration';
import { MAX_HYSTERESIS_FRAMES } from '../../src-shared/calibrators/condition-hysteresis';
import { UsageError } from './usage-error';
import { storedProvenanceOf } from '../core/report/provenance';
import type { CallContext } from '../core/calls/call-context';

/**
 * What `knob metrics` and `knob calibrate` score: (logits or probabilities, labels) from files, or
 * a recorded trace's labelled frames: its fused output (replayed at the recorded or given gate
 * settings) and each branch, in that order, on the same frames in time order.
 */
export const SCORES_INPUT_OPTIONS = {
  ...GATE_OPTIONS,
  logits: { type: 'string' },
  probabilities: { type: 'string' },
  labels: { type: 'string' },
  trace: { type: 'string' },
} as const;

export const SCORES_INPUT_USAGE = `(--logits F | --probabilities F) --labels F | --trace T.arrow`;

export interface ScoresSubject {
  subject: string;
  scores: ClassScores;
  /**
   * The top-label pairs when the scores hold no probabilities: a trace of more than
   * EVERY_CLASS_MAX_CLASSES classes read without every class (its memory then does not grow with K).
   */
  top?: TopLabelScores;
  /** The model's features of the same frames, when a trace recorded them. */
  features?: RowFeatures | null;
  /** The condition each frame was recorded under (`--condition-by`, default corruption), when a trace has it. */
  conditions?: RowConditions | null;
  /** The model a trace was recorded with (null: unknown, or not a trace). */
  model?: { paths: string[]; sha256: string[] } | null;
  /**
   * A kept-class trace's bounds on each metric against its full trace, and what it keeps:
   * withKeptClassBounds puts them on the metrics.
   */
  kept?: KeptClassScoring;
}

async function scoresFromFiles(logitsPath: string, labelsPath: string, probabilities: boolean): Promise<ClassScores> {
  const key = probabilities ? 'probabilities' : 'logits';
  const table = await readNumericTable(logitsPath, key);
  const labels = await readNumericTable(labelsPath, 'labels');
  if (labels.columns !== 1)
    throw new KnobError(
      'INVALID_INPUT',
      `${labelsPath}: labels must be one value per row, got ${labels.columns} columns`,
    );
  if (labels.rows !== table.rows)
    throw new KnobError(
      'INVALID_INPUT',
      `${labelsPath}: ${labels.rows} labels for ${table.rows} rows of ${logitsPath}`,
    );
  try {
    return probabilities
      ? scoresFromProbabilities(table.values, table.columns, labels.values)
      : scoresFromLogits(table.values, table.columns, labels.values);
  } catch (error) {
    // The checks name a sample; the file they are about is the labels' or the scores'.
    if (!(error instanceof KnobError)) throw error;
    const file = error.message.startsWith('label ') ? labelsPath : logitsPath;
    throw new KnobError(error.code, `${file}: ${error.message}`);
  }
}

/**
 * The metadata columns that name a frame's condition: `--condition-by A,B` (each one the trace must
 * have), else the corruption column (where a trace has none, its frames have no known condition).
 */
function conditionColumns(values: Record<string, unknown>, trace: Trace, path: string): string[] {
  const given = values['condition-by'] as string | undefined;
  if (given === undefined) return ['corruption'];
  const columns = given.split(',').filter((c) => c !== '');
  const missing = columns.filter((c) => trace.metadata[c] === undefined);
  if (columns.length === 0 || missing.length > 0)
    throw new UsageError(
      `--condition-by: ${path} has no metadata column ${missing.map((c) => `'${c}'`).join(', ') || "''"} (it has ${Object.keys(trace.metadata).join(', ') || 'none'})`,
    );
  return columns;
}

/**
 * One of the inputs' subjects, scored when asked: `knob metrics` scores and reports one at a time
 * (a subject's n x K probabilities are dropped before the next is made), `knob calibrate` scores
 * only the one it fits.
 */
export interface ScoresSubjectSource {
  subject: string;
  /** A promise where the scoring runs on the parallel suite's threads (a trace scored top-label only). */
  scored(): ScoresSubject | Promise<ScoresSubject>;
  /**
   * The logit rows of the labelled frames and their labels, which `scored` would softmax, for a
   * caller that softmaxes them itself (the parallel metric suite, on both threads into its shared
   * arrays, with no second copy of the probabilities); absent where the scores are not made from
   * logits (files, a trace scored top-label only).
   */
  logitRows?(): { rows: LogitArray; classCount: number; labels: Int32Array };
}

export async function readScoresInput(
  values: Record<string, string | boolean | string[] | boolean[] | undefined>,
  /**
   * 'auto': above EVERY_CLASS_MAX_CLASSES a trace's scores are top-label only (see ScoresSubject.top),
   * and a kept-class trace is read (with ScoresSubject.kept); 'all' needs every class.
   */
  classes: 'auto' | 'all' = 'all',
  /** Where reading a trace reports its progress (the command's bar). */
  call?: CallContext,
  /** Scores a trace's fused output top-label only on both threads (absent: on this one). */
  parallel?: ParallelMetricSuite,
): Promise<ScoresSubjectSource[]> {
  const trace = values.trace as string | undefined;
  if (trace !== undefined) {
    const file = await readTraceFile(
      trace,
      call === undefined ? undefined : (read, size) => call.progress('reading the trace', read, size),
      classes === 'auto' ? 'kept classes too' : 'every class',
    );
    const { gate: settings } = await settingsOverTrace(values, file);
    const model = storedProvenanceOf(file.context)?.model ?? null;
    const frames = labelledFrames(file.trace);
    // before any replay: a trace without labels has nothing to score, whichever its logits
    if (frames.length === 0)
      throw new KnobError(
        'INVALID_INPUT',
        `${trace}: the trace has no labelled frames; metrics and calibrators need true labels`,
      );
    const features = featuresOfFrames(file.trace, frames);
    // the hysteresis a condition-aware calibrator fitted on them applies over a stream
    const hysteresisFrames = positiveInteger(
      values['condition-hysteresis'],
      'condition-hysteresis',
      DEFAULT_HYSTERESIS_FRAMES,
      MAX_HYSTERESIS_FRAMES,
    );
    const columns = conditionColumns(values, file.trace, trace);
    const conditions = conditionsOfFrames(file.trace, frames, columns, hysteresisFrames);
    const topLabelOnly =
      file.trace.keptClasses !== undefined || (classes === 'auto' && file.trace.classCount > EVERY_CLASS_MAX_CLASSES);
    const { frameCount, classCount } = file.trace;
    // the fused logits in shared memory, as the trace's own are (readTraceFile): the parallel
    // suite's helper thread then reads them in place
    const logitsOf = (branch: number): LogitArray =>
      branch === 0
        ? replay(file.trace, settings, {
            keepFusedLogits: true,
            fusedLogitsInto: new Float64Array(new SharedArrayBuffer(frameCount * classCount * 8)),
          }).fusedLogits!
        : branch === 1
          ? file.trace.zStatic
          : file.trace.zDyn;
    return subjectGates(trace, file.trace, settings).map(([subject, gateOf], branch) => ({
      subject,
      scored: (): ScoresSubject | Promise<ScoresSubject> => {
        if (topLabelOnly && parallel !== undefined && file.trace.keptClasses === undefined)
          return parallel
            .topLabelScoresOfFrames(file.trace, gateOf(), frames)
            .then((scored) => ({ subject, ...scored, model }));
        if (topLabelOnly) return { subject, ...topLabelTraceScores(file.trace, gateOf(), frames), model };
        return { subject, scores: scoresOfFrames(file.trace, logitsOf(branch), frames), features, conditions, model };
      },
      ...(topLabelOnly
        ? {}
        : { logitRows: () => ({ ...labelledLogitRows(file.trace, logitsOf(branch), frames), classCount }) }),
    }));
  }
  const logits = values.logits as string | undefined;
  const input = logits ?? (values.probabilities as string | undefined);
  const labels = values.labels as string | undefined;
  if (input === undefined || labels === undefined)
    throw new UsageError('give --logits F (or --probabilities F) with --labels F, or --trace T');
  const subject = `${logits !== undefined ? 'logits' : 'probabilities'} ${input}, labels ${labels}`;
  const scored = { subject, scores: await scoresFromFiles(input, labels, logits === undefined) };
  return [{ subject, scored: () => scored }];
}

/**
 * The fused output at the settings' gate, then each branch (g = 0, g = 1), with their gate values
 * by frame made when asked for: only the top-label path reads them (the full-vector path replays,
 * or reads a branch's logits as they are).
 */
function subjectGates(path: string, trace: Trace, settings: GateSettings): Array<[string, () => Float64Array]> {
  return [
    [fusedSubject(path, settings), () => gateTrajectory(trace, settings)],
    [`static branch of ${path}`, () => new Float64Array(trace.frameCount)],
    [`dynamic branch of ${path}`, () => new Float64Array(trace.frameCount).fill(1)],
  ];
}

function fusedSubject(path: string, settings: GateSettings): string {
  return `fused output of ${path} (${settings.variant}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s, ${settings.mode})`;
}
