import {
  compareCalibrators,
  needsFeatures,
  type CalibrationMethod,
  type CalibratorComparison,
  type HeldOutSplit,
} from '../../../src-shared/calibrators';
import {
  needsConditions,
  type RowConditions,
  type RowFeatures,
} from '../../../src-shared/calibrators/output-calibrator';
import { stopIfCancelled } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import type { LogitArray } from '../../../src-shared/fusion/logits';

/** The fewest labelled frames a calibrator is fitted on. */
export const MIN_CALIBRATION_FRAMES = 20;

/** What calibrators are fitted on: one output's logits on labelled frames, in time order. */
export interface CalibrationSubject {
  /** How the output is named in a refusal ("the recording's fused output", a file's name). */
  name: string;
  logits: LogitArray;
  labels: Int32Array;
  classCount: number;
  /** The model's features of the same frames, or null where they were not recorded. */
  features: RowFeatures | null;
  /** The condition each frame was recorded under (conditionsOfFrames), or null where none is known. */
  conditions?: RowConditions | null;
}

/**
 * Calibrators fitted on one output and compared on held-out frames (calibrator-evaluation.ts), the
 * desk's calibrator.compare (in the metrics worker, on the recording's fused output at the knobs)
 * and `knob calibrate` alike, refused in one set of words: no labelled frames, fewer than
 * MIN_CALIBRATION_FRAMES, or a method that needs the model's features on frames without them.
 */
export function compareCalibratorsOn(
  subject: CalibrationSubject,
  methods: readonly CalibrationMethod[],
  split: HeldOutSplit,
  progress: ComparisonProgress = {},
): CalibratorComparison {
  checkSubject(subject, methods);
  return compareCalibrators(subject.logits, subject.labels, subject.classCount, methods, split, {
    features: subject.features,
    conditions: subject.conditions ?? null,
    ...progress,
  });
}

type ComparisonProgress = Pick<Parameters<typeof compareCalibrators>[5] & object, 'onProgress' | 'signal'>;

/**
 * Rough seconds of one method's fit and evaluation on a recording-sized comparison (npm run bench --
 * calibrators): Dirichlet's cross-validated fit and PTS's network take about four times the rest.
 */
const RELATIVE_COST: Partial<Record<CalibrationMethod, number>> = { dirichlet: 4, pts: 4 };

/**
 * Below this many labelled frames a comparison takes well under a second on one thread; above
 * TWO_THREAD_MAX_LOGIT_BYTES of logits the copy to the other thread (structured clone) would cost
 * more memory than the time it saves is worth.
 */
const TWO_THREAD_MIN_FRAMES = 2000;
const TWO_THREAD_MAX_LOGIT_BYTES = 64 * 2 ** 20;

/**
 * compareCalibratorsOn on two threads (the desk's comparison in the metrics worker): the methods
 * split by their rough cost, the heavier share started elsewhere (`startElsewhere` resolves once
 * that thread has taken it; it evaluates no uncalibrated output) while this thread fits the rest
 * and evaluates the uncalibrated output. Every method is evaluated on the same held-out frames and
 * resamples, so the comparison is the one-thread comparison. A cancel stops this thread's share
 * between fits and cancels the other share, which stops within one optimiser step; a share whose
 * thread fails is fitted here.
 */
export async function compareCalibratorsAlongside(
  subject: CalibrationSubject,
  methods: readonly CalibrationMethod[],
  split: HeldOutSplit,
  progress: ComparisonProgress,
  startElsewhere: (
    methods: CalibrationMethod[],
    signal: AbortSignal,
  ) => Promise<{ answer: Promise<CalibratorComparison> }>,
): Promise<CalibratorComparison> {
  checkSubject(subject, methods);
  const [here, there] = splitByCost(methods);
  const small = subject.labels.length < TWO_THREAD_MIN_FRAMES || subject.logits.length * 8 > TWO_THREAD_MAX_LOGIT_BYTES;
  if (there.length === 0 || small) return compareCalibratorsOn(subject, methods, split, progress);
  const cancelThere = new AbortController();
  const cancelled = 'the calibrator comparison was cancelled';
  stopIfCancelled(progress.signal, cancelled);
  let away: Promise<CalibratorComparison>;
  try {
    ({ answer: away } = await startElsewhere(there, cancelThere.signal));
  } catch {
    // no second thread: all here
    return compareCalibratorsOn(subject, methods, split, progress);
  }
  // this thread's steps, scaled to the whole comparison's (a fallback share's after them)
  const scaled = (offset: number, share: number): ComparisonProgress => ({
    ...progress,
    onProgress: (done, total, stage) =>
      progress.onProgress?.(offset + Math.round((done * share) / total), methods.length, stage),
  });
  // The caller's cancel reaches the other share while this thread waits for it (the signal's
  // 'abort' event fires then); while this thread fits, its fits stop at their next poll of the
  // shared flag and the catch below cancels the share.
  const cancelOnAbort = () => cancelThere.abort();
  progress.signal?.addEventListener('abort', cancelOnAbort, { once: true });
  let mine: CalibratorComparison;
  let theirs: CalibratorComparison | null;
  try {
    // a cancel that came while the share was handed over stops it before this thread's work
    stopIfCancelled(progress.signal, cancelled);
    mine = compareCalibratorsOn(subject, here, split, scaled(0, methods.length));
    stopIfCancelled(progress.signal, cancelled);
    theirs = await away.catch(() => null);
    // a share cancelled is not fitted here instead: the comparison stops
    stopIfCancelled(progress.signal, cancelled);
  } catch (error) {
    cancelThere.abort();
    await away.catch(() => undefined);
    throw error;
  } finally {
    progress.signal?.removeEventListener('abort', cancelOnAbort);
  }
  theirs ??= compareCalibratorsOn(subject, there, split, scaled(methods.length - there.length, there.length));
  const evaluated = [...mine.methods, ...theirs.methods];
  return { ...mine, methods: methods.map((m) => evaluated.find((e) => e.method === m)!) };
}

/** Two shares of about equal cost: this thread's (which also evaluates the uncalibrated output) and the other's. */
function splitByCost(methods: readonly CalibrationMethod[]): [CalibrationMethod[], CalibrationMethod[]] {
  const cost = (m: CalibrationMethod) => RELATIVE_COST[m] ?? 1;
  const here: CalibrationMethod[] = [];
  const there: CalibrationMethod[] = [];
  let [hereCost, thereCost] = [1, 0];
  for (const method of [...methods].sort((a, b) => cost(b) - cost(a))) {
    if (thereCost < hereCost) {
      there.push(method);
      thereCost += cost(method);
    } else {
      here.push(method);
      hereCost += cost(method);
    }
  }
  return [here, there];
}

/** The refusals of a comparison, before anything is fitted. */
function checkSubject(subject: CalibrationSubject, methods: readonly CalibrationMethod[]): void {
  const frames = subject.labels.length;
  if (frames === 0)
    throw new KnobError('NOT_AVAILABLE', `${subject.name}: no labelled frames; calibrators need true labels`);
  if (frames < MIN_CALIBRATION_FRAMES)
    throw new KnobError(
      'NOT_AVAILABLE',
      `${subject.name}: ${frames} labelled frames; fitting a calibrator needs at least ${MIN_CALIBRATION_FRAMES}`,
    );
  const featureMethods = methods.filter(needsFeatures);
  if (featureMethods.length > 0 && subject.features === null)
    throw new KnobError(
      'NOT_AVAILABLE',
      `${subject.name}: ${featureMethods.join(' and ')} need the model's features for every frame, and it has none (record them: knob run --record-features, or "record features" when opening a source)`,
    );
  const conditionMethods = methods.filter(needsConditions);
  if (conditionMethods.length > 0 && (subject.conditions ?? null) === null)
    throw new KnobError(
      'NOT_AVAILABLE',
      `${subject.name}: ${conditionMethods.join(' and ')} need the condition each frame was recorded under, and it has none (a metadata column such as corruption: record from a corruption schedule, or name the column)`,
    );
}

/**
 * Every method that applies to a subject (`--method all`): those that need features only where it
 * has them, and those that need each frame's condition only where it has them.
 */
export function applicableMethods(
  methods: readonly CalibrationMethod[],
  hasFeatures: boolean,
  hasConditions = false,
): { methods: CalibrationMethod[]; skipped: CalibrationMethod[] } {
  const skipped = methods.filter((m) => (!hasFeatures && needsFeatures(m)) || (!hasConditions && needsConditions(m)));
  return { methods: methods.filter((m) => !skipped.includes(m)), skipped };
}
