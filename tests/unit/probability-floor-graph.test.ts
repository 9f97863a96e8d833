/**
 * The probability floor (src-shared/calibrators/probability-floor.ts) in the app and in the
 * deployed calibrator graph (src-main/core/deploy/calibrator-graph.ts, run in onnxruntime-node):
 * isotonic regression and histogram binning, one-vs-rest, fitted where their maps give a class an
 * exact 0 (frames whose true class the fit data made impossible), give every probability at least
 * 1e-6 and a finite NLL, the same in both, within 1e-9 on the probabilities as every calibrator.
 */
import { describe, expect, it } from 'vitest';
import { calibrateLogits, fitCalibrator } from '../../src-shared/calibrators/output-calibrator';
import { oneVsRestMaps, type OneVsRestSpec } from '../../src-shared/calibrators/one-vs-rest';
import { PROBABILITY_FLOOR } from '../../src-shared/calibrators/probability-floor';
import { runCalibratorGraph } from '../support/calibrator-graph-harness';
import { confidentlyWrong, zeroProne } from '../support/zero-prone';

const K = 3;

const meanNll = (logProbabilities: Float64Array, labels: Int32Array) =>
  labels.reduce((sum, y, i) => sum - logProbabilities[i * K + y]!, 0) / labels.length;

describe('the probability floor, in the app and in the deployed graph', () => {
  for (const method of ['isotonic', 'histogram-binning'] as const)
    it(`${method}: where its map gives the true class an exact 0, a finite NLL in both`, async () => {
      const fit = zeroProne(400, 1);
      const { spec } = fitCalibrator(method, fit.logits, fit.labels, K);
      const test = confidentlyWrong(200, 2, 20);
      // the fitted maps themselves give the label of the confidently wrong rows exactly 0
      const maps = oneVsRestMaps(spec as OneVsRestSpec);
      const zeros = Array.from({ length: 20 }, (_, i) => {
        const row = test.logits.subarray(i * K, (i + 1) * K);
        const max = Math.max(...row);
        const sum = row.reduce((a, z) => a + Math.exp(z - max), 0);
        return maps(test.labels[i]!, Math.exp(row[test.labels[i]!]! - max) / sum);
      });
      expect(zeros).toEqual(Array<number>(20).fill(0));

      const app = calibrateLogits(spec, test.logits, K);
      const graph = await runCalibratorGraph(spec, test.logits, K);
      for (const out of [app, graph]) {
        expect(Math.min(...Array.from(out, Math.exp))).toBeGreaterThanOrEqual(PROBABILITY_FLOOR * (1 - 1e-12));
        const nll = meanNll(out, test.labels);
        expect(Number.isFinite(nll)).toBe(true);
        // each confidently wrong row costs -ln(1e-6) = 13.8, not the log floor's 745
        expect(nll).toBeLessThan((20 * -Math.log(PROBABILITY_FLOOR)) / 200 + 1);
        expect(nll).toBeGreaterThan((20 * -Math.log(PROBABILITY_FLOOR)) / 200);
        for (let i = 0; i < 20; i++) expect(out[i * K + test.labels[i]!]).toBeCloseTo(Math.log(PROBABILITY_FLOOR), 9);
      }
      const worst = app.reduce((m, v, i) => Math.max(m, Math.abs(Math.exp(v) - Math.exp(graph[i]!))), 0);
      expect(worst).toBeLessThan(1e-9);
      expect(meanNll(graph, test.labels)).toBeCloseTo(meanNll(app, test.labels), 9);
    });
});
