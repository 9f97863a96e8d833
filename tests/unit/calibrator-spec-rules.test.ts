/**
 * Issue 26, part 6: calibrator specs are checked where they are read. Every method's fitted spec
 * passes the schema; malformed ones (mismatched lengths, knots out of order, temperatures outside
 * [1e-3, 1e3], subnormals among them) are refused naming the field, so they never reach a replay or
 * the step graph.
 */
import { describe, expect, it } from 'vitest';
import {
  CALIBRATION_METHODS,
  CalibratorSpecSchema,
  fitCalibrator,
  needsFeatures,
} from '../../src-shared/calibrators/output-calibrator';
import { describeIssues } from '../../src-shared/zod-issues';
import { syntheticTrace } from '../support/synthetic-trace';

const problems = (spec: unknown): string => {
  const parsed = CalibratorSpecSchema.safeParse(spec);
  return parsed.success ? '' : describeIssues(parsed.error.issues);
};

describe('calibrator specs', () => {
  it('every fitted spec is one the schema takes', () => {
    const trace = syntheticTrace({ frames: 3000, seed: 5 });
    const logits = Float64Array.from(trace.zDyn);
    for (const method of CALIBRATION_METHODS.filter((m) => !needsFeatures(m))) {
      const { spec } = fitCalibrator(method, logits, trace.labels!, trace.classCount);
      expect(problems(JSON.parse(JSON.stringify(spec))), method).toBe('');
    }
  }, 120_000);

  it('a temperature outside [0.001, 1000] is refused, subnormals and zero among them', () => {
    for (const temperature of [5e-324, 0, -1, 1e-4, 1001, Infinity, NaN])
      expect(problems({ method: 'temperature', temperature }), String(temperature)).toBe(
        'temperature: temperature must lie in [0.001, 1000]',
      );
    expect(problems({ method: 'temperature', temperature: 0.001 })).toBe('');
  });

  it('isotonic: x and y of one length, x strictly increasing, y non-decreasing in [0, 1]', () => {
    const good = { x: [0.1, 0.2, 0.5], y: [0, 0.3, 0.9] };
    expect(problems({ method: 'isotonic', perClass: [good, good] })).toBe('');
    expect(problems({ method: 'isotonic', perClass: [good, { x: [0.1, 0.2], y: [0.5] }] })).toBe(
      'perClass.1.y: needs 2 values, one per knot in x',
    );
    expect(problems({ method: 'isotonic', perClass: [{ x: [0.2, 0.2], y: [0, 1] }] })).toBe(
      'perClass.0.x.1: knots must increase strictly',
    );
    expect(problems({ method: 'isotonic', perClass: [{ x: [0.1, 0.2], y: [0.5, 0.4] }] })).toBe(
      'perClass.0.y.1: must not decrease',
    );
    expect(problems({ method: 'isotonic', perClass: [{ x: [], y: [] }] })).toBe(
      'perClass.0.x: needs at least one knot',
    );
  });

  it('binning: B + 1 edges for B values, edges non-decreasing in [0, 1]', () => {
    const bins = { edges: [0, 0.5, 1], values: [0.2, 0.8] };
    expect(problems({ method: 'histogram-binning', edgeRule: 'right-closed', perClass: [bins] })).toBe('');
    expect(problems({ method: 'histogram-binning', edgeRule: 'one-in-extra-bin', perClass: [bins] })).toBe(
      'perClass.0.values: needs 3 values for 3 edges',
    );
    expect(
      problems({
        method: 'histogram-binning',
        edgeRule: 'left-closed',
        perClass: [{ edges: [0, 0.6, 0.5, 1], values: [0, 0, 0] }],
      }),
    ).toBe('perClass.0.edges.2: edges must not decrease');
    expect(
      problems({ method: 'scaling-binning', perClass: [{ ...bins, values: [0.2, 1.5], platt: { a: 1, b: 0 } }] }),
    ).toBe('perClass.0.values.1: must lie in [0, 1]');
  });

  it('vector, matrix and Dirichlet: the weights fit the biases', () => {
    expect(problems({ method: 'vector', weights: [1, 1, 1], bias: [0, 0] })).toBe(
      'weights: needs 2 weights for 2 classes',
    );
    expect(problems({ method: 'matrix', weights: [1, 0, 0], bias: [0, 0] })).toBe(
      'weights: needs 4 weights for 2 classes (K x K)',
    );
    expect(problems({ method: 'matrix', weights: [1, 0, 0, 1], bias: [0, 0] })).toBe('');
  });
});
