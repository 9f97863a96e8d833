/**
 * A calibrator added through the registry alone (issue 28, 4): a "constant shift" method defined
 * here, one descriptor and one step-graph builder, registered at run time (registerCalibrator), is
 * fitted on the shipped model's fused output over the embedded stream (the app's own offline run),
 * applied through the app's calibrator path (its outputs are log softmax(z + shift), not the
 * uncalibrated ones), built into the step graph and run in onnxruntime-node, where it agrees with
 * the app within the step graph's tolerance. Nothing outside this file names the method.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { logitMapRows, type CalibratorDescriptor } from '../../src-shared/calibrators/calibrator-descriptor';
import {
  calibrateLogits,
  calibratorClassCount,
  calibratorFeatureWidth,
  CALIBRATION_METHODS,
  CalibratorSpecSchema,
  checkCalibratorFor,
  describeCalibrator,
  fitCalibrator,
  needsFeatures,
} from '../../src-shared/calibrators/output-calibrator';
import { calibratorDescriptor, registerCalibratorDescriptor } from '../../src-shared/calibrators/calibrator-registry';
import { logSumExpRow, type LogitArray } from '../../src-shared/fusion/logits';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { registerCalibrator, type CalibratorGraph } from '../../src-main/core/deploy/calibrator-graph-registry';
import { buildStepGraph } from '../../src-main/core/deploy/step-graph';
import {
  appReadout,
  EQUIVALENCE_TOLERANCE,
  readoutDifferences,
  stepGraphReadout,
  type CheckFrames,
} from '../../src-main/core/deploy/step-graph-check';
import { loadModel, type LoadedModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { readFileSync } from 'node:fs';
import { embeddedStepStream } from '../support/embedded-step-stream';

const finite = z.number().refine(Number.isFinite, 'not a finite number');
const ShiftSpecSchema = z.strictObject({ method: z.literal('x-constant-shift'), shift: z.array(finite).min(2) });
type ShiftSpec = z.infer<typeof ShiftSpecSchema>;

/**
 * Constant shift: z + b, with b_c = ln(label frequency of c, add-one) - ln(mean softmax p_c) (a
 * prior correction: the mean predicted probability moves toward the label frequencies).
 */
const constantShift = {
  method: 'x-constant-shift',
  schema: ShiftSpecSchema,
  label: 'constant shift of the logits (prior correction)',
  describe: (spec) => `constant shift, max |b| = ${Math.max(...spec.shift.map(Math.abs)).toPrecision(3)}`,
  needsFeatures: false,
  probabilityFloor: 0,
  comparedByDefault: false,
  classCount: (spec) => spec.shift.length,
  featureWidth: () => null,
  fit(logits: LogitArray, labels: Int32Array, k: number) {
    const n = labels.length;
    const meanP = new Float64Array(k);
    const counts = new Float64Array(k);
    for (let i = 0; i < n; i++) {
      const lse = logSumExpRow(logits, i * k, k);
      for (let c = 0; c < k; c++) meanP[c]! += Math.exp(logits[i * k + c]! - lse) / n;
      counts[labels[i]!]!++;
    }
    const shift = Array.from(meanP, (p, c) => Math.log((counts[c]! + 1) / (n + k)) - Math.log(p));
    const spec: ShiftSpec = { method: 'x-constant-shift', shift };
    return {
      spec,
      report: { method: 'constant shift', objectiveName: 'none', objective: 0, iterations: 1, converged: true },
    };
  },
  compile: (spec) =>
    logitMapRows(null, (logits, offset, k, scratch) => {
      for (let c = 0; c < k; c++) scratch[c] = logits[offset + c]! + spec.shift[c]!;
    }),
} satisfies CalibratorDescriptor<typeof ShiftSpecSchema>;

const constantShiftGraph: CalibratorGraph<ShiftSpec> = (b, spec, z, k) =>
  b.op('Add', [z, b.constant('double', [k], spec.shift, 'shift')]);

describe('a calibrator registered at run time', () => {
  let model: LoadedModel;
  let stream: CheckFrames & { labels: Int32Array };
  let unregister: () => void;

  beforeAll(async () => {
    unregister = registerCalibrator(constantShift, constantShiftGraph);
    model = await loadModel(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH, contract: 'knob-native' }));
    stream = await embeddedStepStream(model.description.input, false);
  });
  afterAll(async () => {
    unregister();
    await model.close();
  });

  it('is fitted on the shipped model, applied as designed, and its step graph agrees with the app', async () => {
    const k = model.description.classCount;
    const settings = DEFAULT_GATE_SETTINGS;
    // the app's fused output, uncalibrated (its log-probabilities are logits of the same softmax)
    const before = await appReadout(model, stream, settings, null);
    const fused = before.probabilities.map(Math.log);
    const { spec, report } = fitCalibrator('x-constant-shift', fused, stream.labels, k);
    expect(report.converged).toBe(true);
    const parsed = calibratorDescriptor(spec.method).schema.parse(JSON.parse(JSON.stringify(spec))) as ShiftSpec;
    expect(parsed).toEqual(spec);
    expect(parsed.shift).toHaveLength(k);

    // applied through the app's path: log softmax(z + b), which moves the output
    const calibrated = calibrateLogits(parsed, fused, k);
    let moved = 0;
    for (let i = 0; i < stream.count; i++) {
      const row = Array.from(fused.subarray(i * k, (i + 1) * k), (v, c) => v + parsed.shift[c]!);
      const lse = Math.log(row.reduce((sum, v) => sum + Math.exp(v - Math.max(...row)), 0)) + Math.max(...row);
      for (let c = 0; c < k; c++) {
        expect(calibrated[i * k + c]).toBeCloseTo(row[c]! - lse, 12);
        moved = Math.max(moved, Math.abs(Math.exp(calibrated[i * k + c]!) - before.probabilities[i * k + c]!));
      }
    }
    expect(moved).toBeGreaterThan(1e-3);
    const meanOf = (p: Float64Array, c: number) => p.reduce((s, v, at) => (at % k === c ? s + v : s), 0) / stream.count;
    const frequency = (c: number) => stream.labels.filter((y) => y === c).length / stream.count;
    const gap = (p: Float64Array) => Array.from({ length: k }, (_, c) => Math.abs(meanOf(p, c) - frequency(c)));
    expect(Math.max(...gap(calibrated.map(Math.exp)))).toBeLessThan(Math.max(...gap(before.probabilities)));

    // everything that asks a spec goes through its descriptor
    expect(calibratorClassCount(parsed)).toBe(k);
    expect(calibratorFeatureWidth(parsed)).toBeNull();
    expect(needsFeatures(parsed.method)).toBe(false);
    expect(describeCalibrator(parsed)).toMatch(/^constant shift, max \|b\| = /);
    expect(() => checkCalibratorFor(parsed, k + 1)).toThrow(`maps ${k} classes; the model has ${k + 1}`);

    // exported to the step graph and run in onnxruntime-node: the app's readout within the tolerance
    const graph = buildStepGraph({
      model: readFileSync(DEFAULT_MODEL_PATH),
      contract: 'knob-native',
      adapter: null,
      input: model.description.input,
      gate: settings,
      calibrator: parsed,
      classCount: k,
    });
    const app = await appReadout(model, stream, settings, parsed);
    const step = await stepGraphReadout(graph, stream, model.description.input, settings, k);
    const worst = readoutDifferences(step, app);
    expect(worst.probabilities).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(worst.gate).toBeLessThan(EQUIVALENCE_TOLERANCE);
    // the graph applies the shift: the uncalibrated output is further from it than the tolerance
    expect(readoutDifferences(step, before).probabilities).toBeGreaterThan(1e-3);
  });

  it('stays out of the built-in list and schema, and a clash or a name outside x-... is refused', () => {
    expect(CALIBRATION_METHODS as readonly string[]).not.toContain('x-constant-shift');
    expect(CalibratorSpecSchema.safeParse({ method: 'x-constant-shift', shift: [0, 0] }).success).toBe(false);
    expect(() => registerCalibratorDescriptor(constantShift)).toThrow(/registered already/);
    expect(() =>
      registerCalibratorDescriptor({ ...constantShift, method: 'x-Bad Name' } as unknown as typeof constantShift),
    ).toThrow(/named x-NAME/);
    expect(() => calibratorDescriptor('no-such-method')).toThrow(/no output calibrator 'no-such-method'/);
  });
});
