import { z } from 'zod';
import { KnobError } from '../errors';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import { affineLogitRowInto, fitAffineLogitScaling } from './affine-logit-scaling';
import { checkFitInput, checkRowFeatures, type RowFeatures } from './fit-input';
import type { FitReport } from './fit-report';
import { fitOneVsRest, oneVsRestMaps } from './one-vs-rest';
import { withProbabilityFloor } from './probability-floor';
import { fitTemperature } from './temperature-scaling';
import { compilePts, fitPts, PTS_MAX_INPUTS } from './parameterized-temperature-scaling';
import { fitDirichlet } from './dirichlet-calibration';
import { compileDac, fitDac } from './density-aware-calibration';
import { FeatureBankSchema } from './feature-bank';
import { numberInAcceptedRange, TEMPERATURE_RANGE } from '../gate/accepted-ranges';
import { checkAffineShape, checkBinEdges, checkIsotonicKnots } from './calibrator-spec-rules';
import { compileProcal, fitProcal } from './proximity-informed-calibration';

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
export const CALIBRATION_METHODS = [
  'temperature',
  'vector',
  'matrix',
  'dirichlet',
  'pts',
  'dac',
  'procal',
  'platt',
  'beta',
  'isotonic',
  'histogram-binning',
  'scaling-binning',
] as const;
export type CalibrationMethod = (typeof CALIBRATION_METHODS)[number];

export const CALIBRATION_METHOD_LABELS: Record<CalibrationMethod, string> = {
  temperature: 'temperature scaling (Guo et al. 2017)',
  vector: 'vector scaling (on logits)',
  matrix: 'matrix scaling (on logits, L2 1e-3 on W - I and b)',
  dirichlet: 'Dirichlet calibration, ODIR (Kull et al. 2019: W ln p + b, lambda = mu by 3-fold cross-validation)',
  pts: 'parameterized temperature scaling (Tomani et al. 2022: T from the sorted logits by a small MLP)',
  dac: 'density-aware calibration (Tomani et al. 2023: T from the k-NN distance in feature space)',
  procal: 'proximity-informed calibration (Xiong et al. 2023: bin-mean-shift by k-NN proximity and confidence)',
  platt: 'Platt scaling, one-vs-rest (raw targets)',
  beta: 'beta calibration, one-vs-rest (Kull et al. 2017)',
  isotonic: 'isotonic regression, one-vs-rest',
  'histogram-binning': 'histogram binning, one-vs-rest (15 equal-mass bins)',
  'scaling-binning': 'scaling-binning, one-vs-rest (Kumar et al. 2019, 15 bins)',
};

const numbers = z.array(z.number().refine(Number.isFinite, 'not a finite number')).max(1_000_000);
const Edges = z.strictObject({ edges: numbers, values: numbers });

export const CalibratorSpecSchema = z.discriminatedUnion('method', [
  z.strictObject({
    method: z.literal('temperature'),
    temperature: numberInAcceptedRange('temperature', TEMPERATURE_RANGE),
  }),
  z.strictObject({ method: z.literal('vector'), weights: numbers, bias: numbers }).superRefine(checkAffineShape),
  z.strictObject({ method: z.literal('matrix'), weights: numbers, bias: numbers }).superRefine(checkAffineShape),
  z
    .strictObject({
      method: z.literal('dirichlet'),
      /** K x K row-major, applied to ln p (p the softmax of the logits). */
      weights: numbers,
      bias: numbers,
      offDiagonal: z.number().nonnegative(),
      intercept: z.number().nonnegative(),
    })
    .superRefine(checkAffineShape),
  z
    .strictObject({
      method: z.literal('pts'),
      /** The number of classes it was fitted on (its inputs are that model's sorted logits). */
      classCount: z.number().int().min(2),
      topK: z.number().int().min(1).max(PTS_MAX_INPUTS),
      hidden: z.number().int().min(1).max(64),
      inputMean: numbers,
      // a scale below 1e-6 turns any logit into an infinite input
      inputScale: z.array(z.number().min(1e-6).refine(Number.isFinite, 'not a finite number')).max(PTS_MAX_INPUTS),
      w1: numbers,
      b1: numbers,
      w2: numbers,
      b2: numbers,
      w3: numbers,
      b3: z.number().refine(Number.isFinite, 'not a finite number'),
    })
    .superRefine((spec, context) => {
      const expected: Array<[keyof typeof spec, number]> = [
        ['inputMean', spec.topK],
        ['inputScale', spec.topK],
        ['w1', spec.hidden * spec.topK],
        ['b1', spec.hidden],
        ['w2', spec.hidden * spec.hidden],
        ['b2', spec.hidden],
        ['w3', spec.hidden],
      ];
      for (const [field, length] of expected) {
        if ((spec[field] as number[]).length !== length)
          context.addIssue({ code: 'custom', path: [field], message: `needs ${length} values` });
      }
      if (spec.topK > spec.classCount)
        context.addIssue({
          code: 'custom',
          path: ['topK'],
          message: `more inputs than the ${spec.classCount} classes`,
        });
    }),
  z
    .strictObject({
      method: z.literal('dac'),
      classCount: z.number().int().min(2),
      neighbours: z.number().int().min(1).max(64),
      bank: FeatureBankSchema,
      distanceScale: z.number().positive().refine(Number.isFinite, 'not a finite number'),
      a: z.number().refine(Number.isFinite, 'not a finite number'),
      b: z.number().refine(Number.isFinite, 'not a finite number'),
    })
    .refine((spec) => spec.neighbours <= spec.bank.rows, {
      path: ['neighbours'],
      message: 'more neighbours than the bank has rows',
    }),
  z
    .strictObject({
      method: z.literal('procal'),
      classCount: z.number().int().min(2),
      neighbours: z.number().int().min(1).max(64),
      bank: FeatureBankSchema,
      proximityEdges: numbers,
      confidenceEdges: z.array(numbers).max(64),
      shifts: z.array(numbers).max(64),
    })
    .superRefine((spec, context) => {
      if (spec.neighbours > spec.bank.rows)
        context.addIssue({ code: 'custom', path: ['neighbours'], message: 'more neighbours than the bank has rows' });
      const cells = spec.proximityEdges.length + 1;
      if (spec.confidenceEdges.length !== cells || spec.shifts.length !== cells)
        context.addIssue({ code: 'custom', path: ['shifts'], message: `needs ${cells} proximity bins` });
      spec.shifts.forEach((row, b) => {
        if (row.length !== (spec.confidenceEdges[b]?.length ?? -2) + 1)
          context.addIssue({ code: 'custom', path: ['shifts', b], message: 'one shift per confidence bin' });
      });
    }),
  z.strictObject({ method: z.literal('platt'), perClass: z.array(z.strictObject({ a: z.number(), b: z.number() })) }),
  z.strictObject({
    method: z.literal('beta'),
    perClass: z.array(z.strictObject({ a: z.number(), b: z.number(), c: z.number(), m: z.number().nullable() })),
  }),
  z
    .strictObject({ method: z.literal('isotonic'), perClass: z.array(z.strictObject({ x: numbers, y: numbers })) })
    .superRefine((spec, context) => spec.perClass.forEach((f, c) => checkIsotonicKnots(f, ['perClass', c], context))),
  z
    .strictObject({
      method: z.literal('histogram-binning'),
      edgeRule: z.enum(['left-closed', 'right-closed', 'one-in-extra-bin']),
      /** Each class's equal-mass bins (their edges) and the mean outcome in each. */
      perClass: z.array(Edges),
    })
    .superRefine((spec, context) =>
      spec.perClass.forEach((f, c) => checkBinEdges(f, spec.edgeRule === 'one-in-extra-bin', ['perClass', c], context)),
    ),
  z
    .strictObject({
      method: z.literal('scaling-binning'),
      perClass: z.array(Edges.extend({ platt: z.strictObject({ a: z.number(), b: z.number() }) })),
    })
    .superRefine((spec, context) => spec.perClass.forEach((f, c) => checkBinEdges(f, false, ['perClass', c], context))),
]);
export type CalibratorSpec = z.infer<typeof CalibratorSpecSchema>;

/** How many classes a spec maps (null for temperature scaling, which takes any). */
export function calibratorClassCount(spec: CalibratorSpec): number | null {
  switch (spec.method) {
    case 'temperature':
      return null;
    case 'vector':
      return spec.bias.length;
    case 'matrix':
    case 'dirichlet':
      return spec.bias.length;
    case 'pts':
    case 'dac':
    case 'procal':
      return spec.classCount;
    default:
      return spec.perClass.length;
  }
}

/** Refuses a spec for another number of classes (a calibrator fitted on another model). */
export function checkCalibratorFor(spec: CalibratorSpec, classCount: number): void {
  const k = calibratorClassCount(spec);
  const weights =
    spec.method === 'vector'
      ? k
      : (spec.method === 'matrix' || spec.method === 'dirichlet') && k !== null
        ? k * k
        : null;
  if (k !== null && k !== classCount)
    throw new KnobError('INVALID_SETTINGS', `the calibrator maps ${k} classes; the model has ${classCount}`);
  if (
    (spec.method === 'vector' || spec.method === 'matrix' || spec.method === 'dirichlet') &&
    spec.weights.length !== weights
  )
    throw new KnobError(
      'INVALID_SETTINGS',
      `${spec.method} scaling needs ${weights} weights, got ${spec.weights.length}`,
    );
}

/** Methods that read the model's `features` output of each frame, besides its logits. */
export const FEATURE_METHODS: readonly CalibrationMethod[] = ['dac', 'procal'];

export function needsFeatures(method: CalibrationMethod): boolean {
  return FEATURE_METHODS.includes(method);
}

/** The feature width a spec was fitted with (null for methods that read no features). */
export function calibratorFeatureWidth(spec: CalibratorSpec): number | null {
  return spec.method === 'dac' || spec.method === 'procal' ? spec.bank.width : null;
}

/** What a calibrator is, in words (with its parameters when they are few): the views' label. */
export function describeCalibrator(spec: CalibratorSpec): string {
  if (spec.method === 'temperature') return `temperature scaling, T = ${Number(spec.temperature.toPrecision(4))}`;
  if (spec.method === 'dirichlet')
    return `Dirichlet calibration, ODIR (Kull et al. 2019), lambda ${spec.offDiagonal}, mu ${spec.intercept}`;
  return CALIBRATION_METHOD_LABELS[spec.method];
}

/** The smallest log-probability written (a probability of 0 stays finite). */
export const LOG_FLOOR = -745;

/**
 * A spec made ready to apply: its arrays typed once, so calibrating a row allocates nothing (the
 * live path calibrates every frame).
 */
export interface Calibrator {
  spec: CalibratorSpec;
  /** The width of the features each row needs (dac, procal), or null. */
  featureWidth: number | null;
  /**
   * Calibrates `logits[offset .. offset + k)` to log-probabilities in `out[outOffset ..)`; `scratch`
   * holds at least k values. Feature methods read the row's features at `features[featureOffset ..)`.
   */
  rowInto(
    logits: LogitArray,
    offset: number,
    k: number,
    out: Float64Array,
    outOffset: number,
    scratch: Float64Array,
    features?: Float32Array,
    featureOffset?: number,
  ): void;
}

/** Methods that map the row of logits (or of ln p) before a final softmax; the rest are one-vs-rest. */
const ROW_METHODS = ['temperature', 'vector', 'matrix', 'dirichlet', 'pts', 'dac', 'procal'] as const;
type RowSpec = Extract<CalibratorSpec, { method: (typeof ROW_METHODS)[number] }>;

function isRowSpec(spec: CalibratorSpec): spec is RowSpec {
  return (ROW_METHODS as readonly string[]).includes(spec.method);
}

function missingFeatures(spec: CalibratorSpec): never {
  throw new KnobError(
    'INVALID_INPUT',
    `${CALIBRATION_METHOD_LABELS[spec.method]} needs the model's features for every frame: record with --record-features`,
  );
}

/**
 * The spec made ready to apply, its method's probability floor after every row (probability-floor.ts:
 * the one-vs-rest methods never give a probability below 1e-6; the deployed graph floors alike).
 */
export function compileCalibrator(spec: CalibratorSpec): Calibrator {
  return withProbabilityFloor(compileRows(spec));
}

function compileRows(spec: CalibratorSpec): Calibrator {
  if (spec.method === 'procal') {
    const procal = compileProcal(spec);
    return {
      spec,
      featureWidth: procal.bank.width,
      rowInto(logits, offset, k, out, outOffset, _scratch, features, featureOffset = 0) {
        if (features === undefined) missingFeatures(spec);
        procal.rowInto(logits, offset, k, features, featureOffset, out, outOffset);
      },
    };
  }
  if (!isRowSpec(spec)) {
    const perClass = oneVsRestMaps(spec);
    return {
      spec,
      featureWidth: null,
      rowInto(logits, offset, k, out, outOffset, scratch) {
        const lse = logSumExpRow(logits, offset, k);
        let sum = 0;
        for (let c = 0; c < k; c++) {
          const q = Math.max(0, perClass(c, Math.exp(logits[offset + c] - lse)));
          scratch[c] = q;
          sum += q;
        }
        for (let c = 0; c < k; c++) {
          const q = sum > 0 ? scratch[c] / sum : 1 / k;
          out[outOffset + c] = q > 0 ? Math.max(LOG_FLOOR, Math.log(q)) : LOG_FLOOR;
        }
      },
    };
  }
  const onLogits = logitMap(spec);
  return {
    spec,
    featureWidth: calibratorFeatureWidth(spec),
    rowInto(logits, offset, k, out, outOffset, scratch, features, featureOffset = 0) {
      onLogits(logits, offset, k, scratch, features, featureOffset);
      const lse = logSumExpRow(scratch, 0, k);
      for (let c = 0; c < k; c++) out[outOffset + c] = scratch[c] - lse;
    },
  };
}

type LogitMap = (
  logits: LogitArray,
  offset: number,
  k: number,
  scratch: Float64Array,
  features: Float32Array | undefined,
  featureOffset: number,
) => void;

/** The row map of a row method (before the final softmax). */
function logitMap(spec: Exclude<RowSpec, { method: 'procal' }>): LogitMap {
  switch (spec.method) {
    case 'dac': {
      const dac = compileDac(spec);
      return (logits, offset, k, scratch, features, featureOffset) => {
        if (features === undefined) missingFeatures(spec);
        const temperature = dac.temperatureOf(features, featureOffset);
        for (let c = 0; c < k; c++) scratch[c] = logits[offset + c] / temperature;
      };
    }
    case 'temperature':
      return (logits, offset, k, scratch) => {
        for (let c = 0; c < k; c++) scratch[c] = logits[offset + c] / spec.temperature;
      };
    case 'vector':
    case 'matrix':
      return (logits, offset, k, scratch) =>
        affineLogitRowInto(spec.method, spec.weights, spec.bias, logits, offset, k, scratch);
    case 'pts': {
      const pts = compilePts(spec);
      return (logits, offset, k, scratch) => {
        const temperature = pts.temperatureOf(logits, offset, k);
        for (let c = 0; c < k; c++) scratch[c] = logits[offset + c] / temperature;
      };
    }
    case 'dirichlet': {
      // W ln p + b: ln p of the row first (its own buffer, made once here, not per row).
      const logP = new Float64Array(spec.bias.length);
      return (logits, offset, k, scratch) => {
        const lse = logSumExpRow(logits, offset, k);
        for (let c = 0; c < k; c++) logP[c] = logits[offset + c] - lse;
        affineLogitRowInto('matrix', spec.weights, spec.bias, logP, 0, k, scratch);
      };
    }
  }
}

export type { RowFeatures } from './fit-input';

/** Calibrated log-probabilities of every row (n x k, row-major); feature methods need `features`. */
export function calibrateLogits(
  spec: CalibratorSpec,
  logits: LogitArray,
  classCount: number,
  features: RowFeatures | null = null,
): Float64Array {
  checkCalibratorFor(spec, classCount);
  if (logits.length % classCount !== 0)
    throw new KnobError('INVALID_INPUT', `${logits.length} logits do not make rows of ${classCount}`);
  const calibrator = compileCalibrator(spec);
  checkFeaturesFor(calibrator, features);
  if (calibrator.featureWidth !== null) checkRowFeatures(features!, logits.length / classCount);
  const out = new Float64Array(logits.length);
  const scratch = new Float64Array(classCount);
  for (let o = 0, row = 0; o < logits.length; o += classCount, row++)
    calibrator.rowInto(logits, o, classCount, out, o, scratch, features?.values, row * (features?.width ?? 0));
  return out;
}

/** Refuses to apply a feature calibrator without features, or with features of another width. */
export function checkFeaturesFor(calibrator: Calibrator, features: RowFeatures | null): void {
  if (calibrator.featureWidth === null) return;
  if (features === null) missingFeatures(calibrator.spec);
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
  features: RowFeatures | null = null,
): { spec: CalibratorSpec; report: FitReport } {
  if (labels.length === 0)
    throw new KnobError('INVALID_INPUT', `${CALIBRATION_METHOD_LABELS[method]} needs labelled frames`);
  const k = classCount;
  checkFitInput(logits, labels, k, features);
  if (needsFeatures(method) && features === null)
    throw new KnobError(
      'INVALID_INPUT',
      `${CALIBRATION_METHOD_LABELS[method]} needs the model's features for every frame: record with --record-features`,
    );
  switch (method) {
    case 'dac': {
      const fit = fitDac(logits, labels, k, features!.values, features!.width);
      return { spec: { method, classCount: k, ...fit.params }, report: fit.report };
    }
    case 'procal': {
      const fit = fitProcal(logits, labels, k, features!.values, features!.width);
      return { spec: { method, classCount: k, ...fit.params }, report: fit.report };
    }
    case 'temperature': {
      const fit = fitTemperature(logits, labels, k);
      return { spec: { method, temperature: fit.params.temperature }, report: fit.report };
    }
    case 'vector':
    case 'matrix': {
      const fit = fitAffineLogitScaling(method, logits, labels, k);
      return {
        spec: { method, weights: Array.from(fit.params.weights), bias: Array.from(fit.params.bias) },
        report: fit.report,
      };
    }
    case 'pts': {
      const fit = fitPts(logits, labels, k);
      return { spec: { method, classCount: k, ...fit.params }, report: fit.report };
    }
    case 'dirichlet': {
      const fit = fitDirichlet(logits, labels, k);
      return {
        spec: {
          method,
          weights: Array.from(fit.params.weights),
          bias: Array.from(fit.params.bias),
          ...fit.params.regularisation,
        },
        report: fit.report,
      };
    }
    default:
      return fitOneVsRest(method, logits, labels, k);
  }
}
