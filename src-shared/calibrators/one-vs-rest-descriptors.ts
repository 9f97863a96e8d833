import { z } from 'zod';
import { betaAt, fitBeta } from './beta-calibration';
import { finiteNumbers as numbers, PROBABILITY_FLOOR, type CalibratorDescriptor } from './calibrator-descriptor';
import { checkBinEdges, checkIsotonicKnots } from './calibrator-spec-rules';
import { fitHistogramBinning, histogramBinningAt } from './histogram-binning';
import { fitIsotonic, isotonicAt } from './isotonic-regression';
import { fitEachClass, oneVsRestRows, type OneVsRest, type OneVsRestSpec } from './one-vs-rest';
import { fitPlatt, plattAt } from './platt-scaling';
import { fitScalingBinning, scalingBinningAt } from './scaling-binning';

/**
 * The methods for binary scores, applied one-vs-rest as scikit-learn's CalibratedClassifierCV does
 * (one-vs-rest.ts): Platt, beta, isotonic, histogram binning, scaling-binning. Each gives its
 * per-class map; its rows are that map renormalised, then floored at 1e-6.
 */
const Edges = z.strictObject({ edges: numbers, values: numbers });

/** What every one-vs-rest descriptor shares. */
const ONE_VS_REST_COMMON = {
  needsFeatures: false,
  probabilityFloor: PROBABILITY_FLOOR,
  featureWidth: () => null,
  classCount: (spec: { perClass: unknown[] }) => spec.perClass.length,
};

const PlattSpecSchema = z.strictObject({
  method: z.literal('platt'),
  perClass: z.array(z.strictObject({ a: z.number(), b: z.number() })),
});
const plattMap =
  (spec: z.infer<typeof PlattSpecSchema>): OneVsRest =>
  (c, p) =>
    plattAt(spec.perClass[c], p);
export const plattCalibrator = {
  ...ONE_VS_REST_COMMON,
  method: 'platt',
  schema: PlattSpecSchema,
  label: 'Platt scaling, one-vs-rest (raw targets)',
  comparedByDefault: true,
  fit: (logits, labels, k) => {
    const { perClass, report } = fitEachClass(logits, labels, k, fitPlatt);
    return { spec: { method: 'platt', perClass }, report };
  },
  compile: (spec) => oneVsRestRows(plattMap(spec)),
} satisfies CalibratorDescriptor<typeof PlattSpecSchema>;

const BetaSpecSchema = z.strictObject({
  method: z.literal('beta'),
  perClass: z.array(z.strictObject({ a: z.number(), b: z.number(), c: z.number(), m: z.number().nullable() })),
});
const betaMap =
  (spec: z.infer<typeof BetaSpecSchema>): OneVsRest =>
  (c, p) =>
    betaAt(spec.perClass[c], p);
export const betaCalibrator = {
  ...ONE_VS_REST_COMMON,
  method: 'beta',
  schema: BetaSpecSchema,
  label: 'beta calibration, one-vs-rest (Kull et al. 2017)',
  comparedByDefault: false,
  fit: (logits, labels, k) => {
    const { perClass, report } = fitEachClass(logits, labels, k, fitBeta);
    return { spec: { method: 'beta', perClass }, report };
  },
  compile: (spec) => oneVsRestRows(betaMap(spec)),
} satisfies CalibratorDescriptor<typeof BetaSpecSchema>;

const IsotonicSpecSchema = z
  .strictObject({ method: z.literal('isotonic'), perClass: z.array(z.strictObject({ x: numbers, y: numbers })) })
  .superRefine((spec, context) => spec.perClass.forEach((f, c) => checkIsotonicKnots(f, ['perClass', c], context)));
const isotonicMap = (spec: z.infer<typeof IsotonicSpecSchema>): OneVsRest => {
  const maps = spec.perClass.map((f) => ({ x: Float64Array.from(f.x), y: Float64Array.from(f.y) }));
  return (c, p) => isotonicAt(maps[c], p);
};
export const isotonicCalibrator = {
  ...ONE_VS_REST_COMMON,
  method: 'isotonic',
  schema: IsotonicSpecSchema,
  label: 'isotonic regression, one-vs-rest',
  comparedByDefault: true,
  fit: (logits, labels, k) => {
    const { perClass, report } = fitEachClass(logits, labels, k, (p, y) => {
      const { params, report } = fitIsotonic(p, y);
      return { params: { x: Array.from(params.x), y: Array.from(params.y) }, report };
    });
    return { spec: { method: 'isotonic', perClass }, report };
  },
  compile: (spec) => oneVsRestRows(isotonicMap(spec)),
} satisfies CalibratorDescriptor<typeof IsotonicSpecSchema>;

const HistogramBinningSpecSchema = z
  .strictObject({
    method: z.literal('histogram-binning'),
    edgeRule: z.enum(['left-closed', 'right-closed', 'one-in-extra-bin']),
    /** Each class's equal-mass bins (their edges) and the mean outcome in each. */
    perClass: z.array(Edges),
  })
  .superRefine((spec, context) =>
    spec.perClass.forEach((f, c) => checkBinEdges(f, spec.edgeRule === 'one-in-extra-bin', ['perClass', c], context)),
  );
const histogramBinningMap = (spec: z.infer<typeof HistogramBinningSpecSchema>): OneVsRest => {
  const maps = spec.perClass.map((f) => ({
    spec: {
      scheme: 'equal-mass' as const,
      bins: f.values.length,
      massEdges: 'midpoint' as const,
      edgeRule: spec.edgeRule,
    },
    edges: Float64Array.from(f.edges),
    values: Float64Array.from(f.values),
  }));
  return (c, p) => histogramBinningAt(maps[c], p);
};
export const histogramBinningCalibrator = {
  ...ONE_VS_REST_COMMON,
  method: 'histogram-binning',
  schema: HistogramBinningSpecSchema,
  label: 'histogram binning, one-vs-rest (15 equal-mass bins)',
  comparedByDefault: false,
  fit: (logits, labels, k) => {
    const { perClass, report } = fitEachClass(logits, labels, k, (p, y) => {
      const { params, report } = fitHistogramBinning(p, y);
      return { params: { edges: Array.from(params.edges), values: Array.from(params.values) }, report };
    });
    return { spec: { method: 'histogram-binning', edgeRule: 'right-closed', perClass }, report };
  },
  compile: (spec) => oneVsRestRows(histogramBinningMap(spec)),
} satisfies CalibratorDescriptor<typeof HistogramBinningSpecSchema>;

const ScalingBinningSpecSchema = z
  .strictObject({
    method: z.literal('scaling-binning'),
    perClass: z.array(Edges.extend({ platt: z.strictObject({ a: z.number(), b: z.number() }) })),
  })
  .superRefine((spec, context) => spec.perClass.forEach((f, c) => checkBinEdges(f, false, ['perClass', c], context)));
const scalingBinningMap = (spec: z.infer<typeof ScalingBinningSpecSchema>): OneVsRest => {
  const maps = spec.perClass.map((f) => ({
    platt: f.platt,
    edges: Float64Array.from(f.edges),
    values: Float64Array.from(f.values),
  }));
  return (c, p) => scalingBinningAt(maps[c], p);
};
export const scalingBinningCalibrator = {
  ...ONE_VS_REST_COMMON,
  method: 'scaling-binning',
  schema: ScalingBinningSpecSchema,
  label: 'scaling-binning, one-vs-rest (Kumar et al. 2019, 15 bins)',
  comparedByDefault: false,
  fit: (logits, labels, k) => {
    const { perClass, report } = fitEachClass(logits, labels, k, (p, y) => {
      const { params, report } = fitScalingBinning(p, y);
      return {
        params: { platt: params.platt, edges: Array.from(params.edges), values: Array.from(params.values) },
        report,
      };
    });
    return { spec: { method: 'scaling-binning', perClass }, report };
  },
  compile: (spec) => oneVsRestRows(scalingBinningMap(spec)),
} satisfies CalibratorDescriptor<typeof ScalingBinningSpecSchema>;

const CLASS_MAPS = {
  platt: plattMap,
  beta: betaMap,
  isotonic: isotonicMap,
  'histogram-binning': histogramBinningMap,
  'scaling-binning': scalingBinningMap,
} satisfies Record<OneVsRestSpec['method'], (spec: never) => OneVsRest>;

/** Each class's map of a one-vs-rest spec, its arrays typed once (the live path maps every frame). */
export function oneVsRestMaps(spec: OneVsRestSpec): OneVsRest {
  return (CLASS_MAPS[spec.method] as (spec: OneVsRestSpec) => OneVsRest)(spec);
}
