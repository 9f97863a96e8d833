import { z } from 'zod';
import { KnobError } from '../errors';
import { logSumExpRow } from '../fusion/logits';
import { numberInAcceptedRange, TEMPERATURE_RANGE } from '../gate/accepted-ranges';
import { affineLogitRowInto, fitAffineLogitScaling } from './affine-logit-scaling';
import {
  dividedRowInto,
  finiteNumbers as numbers,
  logitMapRows,
  type CalibratorDescriptor,
} from './calibrator-descriptor';
import { checkAffineShape } from './calibrator-spec-rules';
import { fitDirichlet } from './dirichlet-calibration';
import { compilePts, fitPts, PTS_MAX_INPUTS } from './parameterized-temperature-scaling';
import { fitTemperature } from './temperature-scaling';

/**
 * The calibrators that map the row of logits (or of ln p) before a final softmax: temperature,
 * vector and matrix scaling, Dirichlet calibration and PTS (calibrator-descriptor.ts).
 */
const TemperatureSpecSchema = z.strictObject({
  method: z.literal('temperature'),
  temperature: numberInAcceptedRange('temperature', TEMPERATURE_RANGE),
});

export const temperatureCalibrator = {
  method: 'temperature',
  schema: TemperatureSpecSchema,
  label: 'temperature scaling (Guo et al. 2017)',
  describe: (spec) => `temperature scaling, T = ${Number(spec.temperature.toPrecision(4))}`,
  needsFeatures: false,
  probabilityFloor: 0,
  comparedByDefault: true,
  classCount: () => null,
  featureWidth: () => null,
  fit(logits, labels, k) {
    const fit = fitTemperature(logits, labels, k);
    return { spec: { method: 'temperature', temperature: fit.params.temperature }, report: fit.report };
  },
  compile: (spec) =>
    logitMapRows(null, (logits, offset, k, scratch) => dividedRowInto(logits, offset, k, scratch, spec.temperature)),
} satisfies CalibratorDescriptor<typeof TemperatureSpecSchema>;

/** Refuses weights that are not K (vector) or K x K (matrix, Dirichlet) for the spec's K biases. */
function checkWeights(spec: { method: string; weights: number[]; bias: number[] }): void {
  const k = spec.bias.length;
  const weights = spec.method === 'vector' ? k : k * k;
  if (spec.weights.length !== weights)
    throw new KnobError(
      'INVALID_SETTINGS',
      `${spec.method} scaling needs ${weights} weights, got ${spec.weights.length}`,
    );
}

function affineDescriptor<M extends 'vector' | 'matrix'>(method: M, label: string, comparedByDefault: boolean) {
  const schema = z
    .strictObject({ method: z.literal(method), weights: numbers, bias: numbers })
    .superRefine(checkAffineShape);
  return {
    method,
    schema,
    label,
    needsFeatures: false,
    probabilityFloor: 0,
    comparedByDefault,
    classCount: (spec) => spec.bias.length,
    featureWidth: () => null,
    checkFor: checkWeights,
    fit(logits, labels, k, _features, signal) {
      const fit = fitAffineLogitScaling(method, logits, labels, k, undefined, signal);
      return {
        spec: { method, weights: Array.from(fit.params.weights), bias: Array.from(fit.params.bias) },
        report: fit.report,
      };
    },
    compile: (spec) =>
      logitMapRows(null, (logits, offset, k, scratch) =>
        affineLogitRowInto(method, spec.weights, spec.bias, logits, offset, k, scratch),
      ),
  } satisfies CalibratorDescriptor<typeof schema>;
}

export const vectorCalibrator = affineDescriptor('vector', 'vector scaling (on logits)', true);
export const matrixCalibrator = affineDescriptor('matrix', 'matrix scaling (on logits, L2 1e-3 on W - I and b)', false);

const DirichletSpecSchema = z
  .strictObject({
    method: z.literal('dirichlet'),
    /** K x K row-major, applied to ln p (p the softmax of the logits). */
    weights: numbers,
    bias: numbers,
    offDiagonal: z.number().nonnegative(),
    intercept: z.number().nonnegative(),
  })
  .superRefine(checkAffineShape);

export const dirichletCalibrator = {
  method: 'dirichlet',
  schema: DirichletSpecSchema,
  label: 'Dirichlet calibration, ODIR (Kull et al. 2019: W ln p + b, lambda = mu by 3-fold cross-validation)',
  describe: (spec) =>
    `Dirichlet calibration, ODIR (Kull et al. 2019), lambda ${spec.offDiagonal}, mu ${spec.intercept}`,
  needsFeatures: false,
  probabilityFloor: 0,
  comparedByDefault: false,
  classCount: (spec) => spec.bias.length,
  featureWidth: () => null,
  checkFor: checkWeights,
  fit(logits, labels, k, _features, signal) {
    const fit = fitDirichlet(logits, labels, k, signal);
    return {
      spec: {
        method: 'dirichlet',
        weights: Array.from(fit.params.weights),
        bias: Array.from(fit.params.bias),
        ...fit.params.regularisation,
      },
      report: fit.report,
    };
  },
  compile(spec) {
    // W ln p + b: ln p of the row first (its own buffer, made once here, not per row).
    const logP = new Float64Array(spec.bias.length);
    return logitMapRows(null, (logits, offset, k, scratch) => {
      const lse = logSumExpRow(logits, offset, k);
      for (let c = 0; c < k; c++) logP[c] = logits[offset + c] - lse;
      affineLogitRowInto('matrix', spec.weights, spec.bias, logP, 0, k, scratch);
    });
  },
} satisfies CalibratorDescriptor<typeof DirichletSpecSchema>;

const PtsSpecSchema = z
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
  });

export const ptsCalibrator = {
  method: 'pts',
  schema: PtsSpecSchema,
  label: 'parameterized temperature scaling (Tomani et al. 2022: T from the sorted logits by a small MLP)',
  needsFeatures: false,
  probabilityFloor: 0,
  comparedByDefault: false,
  classCount: (spec) => spec.classCount,
  featureWidth: () => null,
  fit(logits, labels, k, _features, signal) {
    const fit = fitPts(logits, labels, k, { signal });
    return { spec: { method: 'pts', classCount: k, ...fit.params }, report: fit.report };
  },
  compile(spec) {
    const pts = compilePts(spec);
    return logitMapRows(null, (logits, offset, k, scratch) =>
      dividedRowInto(logits, offset, k, scratch, pts.temperatureOf(logits, offset, k)),
    );
  },
} satisfies CalibratorDescriptor<typeof PtsSpecSchema>;
