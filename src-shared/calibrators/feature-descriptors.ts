import { z } from 'zod';
import { KnobError } from '../errors';
import {
  dividedRowInto,
  finiteNumbers as numbers,
  logitMapRows,
  missingFeatures,
  type CalibratorDescriptor,
} from './calibrator-descriptor';
import { compileConditional, fitConditional, MAX_CONDITION_NAME, MAX_CONDITIONS } from './conditional-calibration';
import { MAX_HYSTERESIS_FRAMES } from './condition-hysteresis';
import { compileDac, fitDac } from './density-aware-calibration';
import { numberInAcceptedRange, TEMPERATURE_RANGE } from '../gate/accepted-ranges';
import { FeatureBankSchema } from './feature-bank';
import { compileProcal, fitProcal } from './proximity-informed-calibration';

/**
 * The feature calibrators (calibrator-descriptor.ts): DAC and ProCal read the model's `features`
 * output of each frame and carry a bank of the fitting frames' features (feature-bank.ts).
 */
const finite = z.number().refine(Number.isFinite, 'not a finite number');

/** What both feature descriptors share. */
const FEATURE_COMMON = {
  needsFeatures: true,
  probabilityFloor: 0,
  comparedByDefault: false,
  classCount: (spec: { classCount: number }) => spec.classCount,
  featureWidth: (spec: { bank: { width: number } }) => spec.bank.width,
};

const DacSpecSchema = z
  .strictObject({
    method: z.literal('dac'),
    classCount: z.number().int().min(2),
    neighbours: z.number().int().min(1).max(64),
    bank: FeatureBankSchema,
    distanceScale: z.number().positive().refine(Number.isFinite, 'not a finite number'),
    a: finite,
    b: finite,
  })
  .refine((spec) => spec.neighbours <= spec.bank.rows, {
    path: ['neighbours'],
    message: 'more neighbours than the bank has rows',
  });

const DAC_LABEL = 'density-aware calibration (Tomani et al. 2023: T from the k-NN distance in feature space)';

export const dacCalibrator = {
  method: 'dac',
  schema: DacSpecSchema,
  label: DAC_LABEL,
  ...FEATURE_COMMON,
  fit(logits, labels, k, features) {
    const fit = fitDac(logits, labels, k, features!.values, features!.width);
    return { spec: { method: 'dac', classCount: k, ...fit.params }, report: fit.report };
  },
  compile(spec) {
    const dac = compileDac(spec);
    return logitMapRows(spec.bank.width, (logits, offset, k, scratch, features, featureOffset) => {
      if (features === undefined) missingFeatures(DAC_LABEL);
      dividedRowInto(logits, offset, k, scratch, dac.temperatureOf(features, featureOffset));
    });
  },
} satisfies CalibratorDescriptor<typeof DacSpecSchema>;

const ProcalSpecSchema = z
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
  });

const PROCAL_LABEL =
  'proximity-informed calibration (Xiong et al. 2023: bin-mean-shift by k-NN proximity and confidence)';

export const procalCalibrator = {
  method: 'procal',
  schema: ProcalSpecSchema,
  label: PROCAL_LABEL,
  ...FEATURE_COMMON,
  fit(logits, labels, k, features) {
    const fit = fitProcal(logits, labels, k, features!.values, features!.width);
    return { spec: { method: 'procal', classCount: k, ...fit.params }, report: fit.report };
  },
  compile(spec) {
    const procal = compileProcal(spec);
    return {
      featureWidth: procal.bank.width,
      rowInto(logits, offset, k, out, outOffset, _scratch, features, featureOffset = 0) {
        if (features === undefined) missingFeatures(PROCAL_LABEL);
        procal.rowInto(logits, offset, k, features, featureOffset, out, outOffset);
      },
    };
  },
} satisfies CalibratorDescriptor<typeof ProcalSpecSchema>;

const ConditionalSpecSchema = z
  .strictObject({
    method: z.literal('conditional'),
    conditions: z.array(z.string().min(1).max(MAX_CONDITION_NAME)).min(2).max(MAX_CONDITIONS),
    temperatures: z.array(numberInAcceptedRange('temperature', TEMPERATURE_RANGE)).max(MAX_CONDITIONS),
    detector: z.strictObject({ mean: numbers, scale: numbers, weights: numbers, bias: numbers }),
    /** condition-hysteresis.ts; a spec written before the hysteresis switches at the first frame (1). */
    hysteresisFrames: z.number().int().min(1).max(MAX_HYSTERESIS_FRAMES).default(1),
  })
  .superRefine((spec, context) => {
    const c = spec.conditions.length;
    const width = spec.detector.mean.length;
    const issue = (path: Array<string | number>, message: string) =>
      context.addIssue({ code: 'custom', path, message });
    if (new Set(spec.conditions).size !== c) issue(['conditions'], 'condition names must differ');
    if (spec.temperatures.length !== c) issue(['temperatures'], `needs one temperature per condition (${c})`);
    if (spec.detector.bias.length !== c) issue(['detector', 'bias'], `needs one bias per condition (${c})`);
    if (width < 1) issue(['detector', 'mean'], 'needs at least one feature');
    if (spec.detector.scale.length !== width) issue(['detector', 'scale'], `needs one scale per feature (${width})`);
    if (spec.detector.weights.length !== c * width)
      issue(['detector', 'weights'], `needs conditions x features weights (${c} x ${width})`);
  });

const CONDITIONAL_LABEL =
  "condition-aware calibration (a temperature per condition, the condition detected from the frame's features)";

export const conditionalCalibrator = {
  method: 'conditional',
  schema: ConditionalSpecSchema,
  label: CONDITIONAL_LABEL,
  describe: (spec) =>
    `condition-aware calibration, ${spec.conditions.map((name, c) => `${name}: T = ${Number(spec.temperatures[c]!.toPrecision(3))}`).join(', ')}; ` +
    `hysteresis ${spec.hysteresisFrames === 1 ? '1 frame (none)' : `${spec.hysteresisFrames} frames`}`,
  needsFeatures: true,
  needsConditions: true,
  probabilityFloor: 0,
  comparedByDefault: false,
  classCount: () => null,
  featureWidth: (spec) => spec.detector.mean.length,
  fit(logits, labels, k, features, signal, conditions) {
    if (conditions === null || conditions === undefined)
      throw new KnobError(
        'INVALID_INPUT',
        `${CONDITIONAL_LABEL} needs the condition each frame was recorded under (a metadata column such as corruption)`,
      );
    const fit = fitConditional(logits, labels, k, features!, conditions, signal);
    return { spec: { method: 'conditional', ...fit.params }, report: fit.report };
  },
  compile(spec) {
    const conditional = compileConditional(spec);
    const width = spec.detector.mean.length;
    return {
      ...logitMapRows(width, (logits, offset, k, scratch, features, featureOffset, condition) => {
        if (features === undefined) missingFeatures(CONDITIONAL_LABEL);
        dividedRowInto(logits, offset, k, scratch, conditional.temperatureOf(features, featureOffset, condition));
      }),
      condition: {
        names: spec.conditions,
        hysteresisFrames: spec.hysteresisFrames,
        detect: (features, featureOffset) => conditional.conditionOf(features, featureOffset),
      },
    };
  },
} satisfies CalibratorDescriptor<typeof ConditionalSpecSchema>;
