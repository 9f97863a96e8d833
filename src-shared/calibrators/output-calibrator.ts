import { z } from 'zod';
import type { CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import type { LogitArray } from '../fusion/logits';
import { missingFeatures, type ConditionChoice, type RowInto } from './calibrator-descriptor';
import {
  BUILT_IN_CALIBRATORS,
  CALIBRATION_METHODS,
  CALIBRATOR_SPEC_SCHEMAS,
  calibratorDescriptor,
  type CalibrationMethod,
  type ExtensionCalibratorSpec,
  type ExtensionMethod,
} from './calibrator-registry';
import { checkFitInput, checkRowFeatures, type RowConditions, type RowFeatures } from './fit-input';
import type { FitReport } from './fit-report';
import { withProbabilityFloor } from './probability-floor';
import { appliedCondition, createConditionHysteresis } from './condition-hysteresis';

/**
 * A calibrator of the model's output (applied after fusion): one fitted map from a row of K logits
 * to K calibrated log-probabilities, with its parameters as plain JSON (the settings file, the
 * export, the API carry it). Methods on the logits: temperature, vector and matrix scaling. Methods
 * for binary scores are applied one-vs-rest, as scikit-learn's CalibratedClassifierCV does: class
 * k's probability p_k is mapped by its own fitted map f_k (fitted on (p_k, y = k)) and the row is
 * renormalised, q = f(p) / sum f(p) (uniform when every f_k is 0), then raised to the probability
 * floor of 1e-6 (probability-floor.ts). The output is log q, so anything that takes logits
 * (softmax, every metric) reads calibrated probabilities unchanged.
 */
/*
 * Each method is one descriptor (calibrator-descriptor.ts) in the registry (calibrator-registry.ts):
 * everything here reads it, so no function below names a method.
 */
export { CALIBRATION_METHODS, type CalibrationMethod };
export { LOG_FLOOR } from './calibrator-descriptor';
export {
  registerCalibratorDescriptor,
  type ExtensionCalibratorSpec,
  type ExtensionMethod,
} from './calibrator-registry';

export const CALIBRATION_METHOD_LABELS = Object.fromEntries(
  BUILT_IN_CALIBRATORS.map((d) => [d.method, d.label]),
) as Record<CalibrationMethod, string>;

/** Every built-in spec: the union of the registry's schemas, discriminated by `method`. */
export const CalibratorSpecSchema = z.discriminatedUnion('method', CALIBRATOR_SPEC_SCHEMAS);
export type CalibratorSpec = z.infer<typeof CalibratorSpecSchema>;
/** A built-in spec or one of a method registered at run time. */
export type AnyCalibratorSpec = CalibratorSpec | ExtensionCalibratorSpec;

/** How many classes a spec maps (null for temperature scaling, which takes any). */
export function calibratorClassCount(spec: AnyCalibratorSpec): number | null {
  return calibratorDescriptor(spec.method).classCount(spec);
}

/** Refuses a spec for another number of classes (a calibrator fitted on another model). */
export function checkCalibratorFor(spec: AnyCalibratorSpec, classCount: number): void {
  const descriptor = calibratorDescriptor(spec.method);
  const k = descriptor.classCount(spec);
  if (k !== null && k !== classCount)
    throw new KnobError('INVALID_SETTINGS', `the calibrator maps ${k} classes; the model has ${classCount}`);
  descriptor.checkFor?.(spec, classCount);
}

/** Methods that read the model's `features` output of each frame, besides its logits. */
export const FEATURE_METHODS: readonly CalibrationMethod[] = CALIBRATION_METHODS.filter(
  (m) => calibratorDescriptor(m).needsFeatures,
);

export function needsFeatures(method: CalibrationMethod | ExtensionMethod): boolean {
  return calibratorDescriptor(method).needsFeatures;
}

/** The built-in methods the desk's comparison ticks at first. */
export const COMPARED_BY_DEFAULT: readonly CalibrationMethod[] = CALIBRATION_METHODS.filter(
  (m) => calibratorDescriptor(m).comparedByDefault,
);

/** The feature width a spec was fitted with (null for methods that read no features). */
export function calibratorFeatureWidth(spec: AnyCalibratorSpec): number | null {
  return calibratorDescriptor(spec.method).featureWidth(spec);
}

/** What a calibrator is, in words (with its parameters when they are few): the views' label. */
export function describeCalibrator(spec: AnyCalibratorSpec): string {
  const descriptor = calibratorDescriptor(spec.method);
  return descriptor.describe?.(spec) ?? descriptor.label;
}

/**
 * A spec made ready to apply: its arrays typed once, so calibrating a row allocates nothing (the
 * live path calibrates every frame).
 */
export interface Calibrator<S extends AnyCalibratorSpec = CalibratorSpec> {
  spec: S;
  /** The width of the features each row needs (dac, procal), or null. */
  featureWidth: number | null;
  /**
   * Calibrates `logits[offset .. offset + k)` to log-probabilities in `out[outOffset ..)`; `scratch`
   * holds at least k values. Feature methods read the row's features at `features[featureOffset ..)`.
   */
  rowInto: RowInto;
  /** How a condition-aware calibrator chooses each row's condition; absent for the others. */
  condition?: ConditionChoice;
}

/**
 * The spec made ready to apply, its method's probability floor after every row (probability-floor.ts:
 * the one-vs-rest methods never give a probability below 1e-6; the deployed graph floors alike).
 */
export function compileCalibrator<S extends AnyCalibratorSpec>(spec: S): Calibrator<S> {
  const { featureWidth, rowInto, condition } = calibratorDescriptor(spec.method).compile(spec);
  return withProbabilityFloor({ spec, featureWidth, rowInto, ...(condition === undefined ? {} : { condition }) });
}

export type { RowConditions, RowFeatures } from './fit-input';

/** Methods whose fit reads the condition each frame was recorded under (RowConditions). */
export function needsConditions(method: CalibrationMethod | ExtensionMethod): boolean {
  return calibratorDescriptor(method).needsConditions ?? false;
}

/**
 * Calibrated log-probabilities of every row (n x k, row-major); feature methods need `features`.
 * `rows`: 'one stream', the rows are a stream's consecutive frames from its start, and a
 * condition-aware calibrator applies its hysteresis over them (condition-hysteresis.ts); 'each
 * alone' (the default), every row is judged on its own, as a held-out sample or a reset-mode frame.
 */
export function calibrateLogits(
  spec: AnyCalibratorSpec,
  logits: LogitArray,
  classCount: number,
  features: RowFeatures | null = null,
  rows: 'each alone' | 'one stream' = 'each alone',
): Float64Array {
  checkCalibratorFor(spec, classCount);
  if (logits.length % classCount !== 0)
    throw new KnobError('INVALID_INPUT', `${logits.length} logits do not make rows of ${classCount}`);
  const calibrator = compileCalibrator(spec);
  checkFeaturesFor(calibrator, features);
  if (calibrator.featureWidth !== null) checkRowFeatures(features!, logits.length / classCount);
  const out = new Float64Array(logits.length);
  const scratch = new Float64Array(classCount);
  const choice = calibrator.condition;
  const stream = choice !== undefined && rows === 'one stream' ? createConditionHysteresis() : null;
  for (let o = 0, row = 0; o < logits.length; o += classCount, row++) {
    const featureOffset = row * (features?.width ?? 0);
    const condition = stream === null ? undefined : appliedCondition(choice!, stream, features!.values, featureOffset);
    calibrator.rowInto(logits, o, classCount, out, o, scratch, features?.values, featureOffset, condition);
  }
  return out;
}

/** Refuses to apply a feature calibrator without features, or with features of another width. */
export function checkFeaturesFor(calibrator: Calibrator<AnyCalibratorSpec>, features: RowFeatures | null): void {
  if (calibrator.featureWidth === null) return;
  if (features === null) missingFeatures(calibratorDescriptor(calibrator.spec.method).label);
  if (features.width !== calibrator.featureWidth)
    throw new KnobError(
      'INVALID_SETTINGS',
      `the calibrator was fitted on ${calibrator.featureWidth} features per frame; these frames have ${features.width}`,
    );
}

/** Fits one method on (logits, labels) (and the rows' features, for the feature methods). */
export function fitCalibrator(
  method: CalibrationMethod,
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  features?: RowFeatures | null,
  signal?: CancelSignal,
  conditions?: RowConditions | null,
): { spec: CalibratorSpec; report: FitReport };
export function fitCalibrator(
  method: ExtensionMethod,
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  features?: RowFeatures | null,
  signal?: CancelSignal,
  conditions?: RowConditions | null,
): { spec: ExtensionCalibratorSpec; report: FitReport };
export function fitCalibrator(
  method: CalibrationMethod | ExtensionMethod,
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  features: RowFeatures | null = null,
  /** Read by the fits that take seconds (the optimisers'): a cancelled fit throws CANCELLED. */
  signal?: CancelSignal,
  /** The condition of each row, for the methods that need it (needsConditions). */
  conditions: RowConditions | null = null,
): { spec: AnyCalibratorSpec; report: FitReport } {
  const descriptor = calibratorDescriptor(method);
  if (labels.length === 0) throw new KnobError('INVALID_INPUT', `${descriptor.label} needs labelled frames`);
  checkFitInput(logits, labels, classCount, features);
  if (descriptor.needsFeatures && features === null) missingFeatures(descriptor.label);
  if (conditions !== null && conditions.codes.length !== labels.length)
    throw new KnobError('INVALID_INPUT', `${conditions.codes.length} row conditions for ${labels.length} rows`);
  return descriptor.fit(logits, labels, classCount, features, signal, conditions) as {
    spec: AnyCalibratorSpec;
    report: FitReport;
  };
}
