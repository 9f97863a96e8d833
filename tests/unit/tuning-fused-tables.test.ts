/**
 * The tuner's objective from fused-score tables (src-shared/tuning/fused-tables.ts) against the
 * full-vector objective (the K logits fused and scored a frame at a time): every table-scored
 * metric, every variant and mode, temperatures, K in {32, 100, 1000}, within 1e-9; the tables given
 * by a caller (the pool) and the objective's own give the same figures; and a whole tune on the
 * tables reaches the same setting as on full vectors.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import {
  buildFusedTables,
  parseTuningRequest,
  tune,
  tuningFigures,
  tuningFrames,
  TuningObjective,
  usesFusedTables,
  type TuningMetric,
  type TuningPoint,
} from '../../src-shared/tuning';
import { labelledFrames } from '../../src-shared/trace/trace-scores';
import { syntheticTrace } from '../support/synthetic-trace';

const TABLED_METRICS: TuningMetric[] = ['ece', 'ece-equal-mass', 'nll', 'brier', 'smooth-ece'];

const settingsList: GateSettings[] = [
  { ...DEFAULT_GATE_SETTINGS, variant: 'second-order', mode: 'continuous', zeta: 0.4, wnRadPerSec: 6 },
  { ...DEFAULT_GATE_SETTINGS, variant: 'ema', mode: 'continuous', wnRadPerSec: 3 },
  { ...DEFAULT_GATE_SETTINGS, variant: 'instant', mode: 'continuous' },
  { ...DEFAULT_GATE_SETTINGS, variant: 'second-order', mode: 'reset', zeta: 1.3, wnRadPerSec: 12 },
];

describe('the tuner on fused-score tables', () => {
  for (const classCount of [32, 100, 1000]) {
    it(`equals the full-vector objective for every tabled metric at K = ${classCount}`, () => {
      const trace = syntheticTrace({ frames: classCount === 1000 ? 300 : 900, classCount, seed: classCount });
      const frames = labelledFrames(trace).filter((_, i) => i % 3 !== 0);
      const points: TuningPoint[] = settingsList.flatMap((settings) => [
        { settings, temperature: 1 },
        { settings, temperature: 1.7 },
      ]);
      const tables = buildFusedTables(trace, labelledFrames(trace), [1, 1.7]);
      for (const metric of TABLED_METRICS) {
        expect(usesFusedTables(metric, classCount)).toBe(true);
        const exact = new TuningObjective(trace, frames, metric, null, 'full-vectors');
        const own = new TuningObjective(trace, frames, metric);
        const given = new TuningObjective(trace, frames, metric, tables);
        for (const point of points) {
          const reference = exact.evaluate(point);
          expect(Number.isFinite(reference)).toBe(true);
          expect(Math.abs(own.evaluate(point) - reference), `${metric} at ${JSON.stringify(point)}`).toBeLessThan(1e-9);
          expect(given.evaluate(point)).toBe(own.evaluate(point));
        }
      }
    });
  }

  it('classwise ECE keeps the full vectors', () => {
    expect(usesFusedTables('classwise-ece', 1000)).toBe(false);
    expect(usesFusedTables('ece', 10)).toBe(false);
  });

  it('a whole tune on the tables chooses what a tune on full vectors would', async () => {
    const trace = syntheticTrace({ frames: 1200, classCount: 64, seed: 7 });
    const request = parseTuningRequest({ metric: 'nll', zeta: { points: 6 }, wnRadPerSec: { points: 6 } });
    const current = { settings: DEFAULT_GATE_SETTINGS, temperature: 1 };
    const onTables = await tune(trace, request, current);
    // the same search, each setting's figure from the full-vector objective of the same frames
    const exact = new TuningObjective(trace, tuningFrames(trace, request.split).search, 'nll', null, 'full-vectors');
    const onFullVectors = await tune(trace, request, current, {
      evaluate: async (points) => points.map((point) => tuningFigures(exact, point, trace.nominalDtSeconds)),
    });
    expect(onTables.best.point).toEqual(onFullVectors.best.point);
    expect(Math.abs(onTables.best.metric - onFullVectors.best.metric)).toBeLessThan(1e-9);
  });
});
