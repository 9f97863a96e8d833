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
  progress: Pick<Parameters<typeof compareCalibrators>[5] & object, 'onProgress' | 'signal'> = {},
): CalibratorComparison {
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
  return compareCalibrators(subject.logits, subject.labels, subject.classCount, methods, split, {
    features: subject.features,
    conditions: subject.conditions ?? null,
    ...progress,
  });
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
