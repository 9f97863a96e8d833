import { parentPort } from 'node:worker_threads';
import { toErrorPayload } from '../../../src-shared/errors';
import type { MetricSuiteOptions } from '../../../src-shared/metrics/metric-suite';
import { scoreRowsInto, topLabelRowsInto } from '../../../src-shared/metrics/scores';
import { takeSuiteWork, type SharedSuiteArrays } from './shared-suite-arrays';

/**
 * The second thread of the parallel metric suite (parallel-metric-suite.ts): the softmax (when
 * the suite starts from logits) and top-label pairs of the rows it is given, then work from the shared counter until none is left.
 * Every message is answered with { ok, results } or the error.
 */
export type HelperRequest =
  | { kind: 'rows'; arrays: SharedSuiteArrays; from: number; to: number }
  | { kind: 'work'; arrays: SharedSuiteArrays; options: MetricSuiteOptions };

parentPort?.on('message', (request: HelperRequest) => {
  try {
    const { arrays } = request;
    if (request.kind === 'rows') {
      const { from, to } = request;
      if (arrays.helperLogits !== null)
        scoreRowsInto(arrays.helperLogits, arrays.labels, arrays.classCount, from, to, arrays);
      else topLabelRowsInto(arrays.probabilities, arrays.labels, arrays.classCount, from, to, arrays.top);
      parentPort?.postMessage({ ok: true, results: [] });
    } else {
      parentPort?.postMessage({ ok: true, results: takeSuiteWork(arrays, request.options) });
    }
  } catch (error) {
    parentPort?.postMessage({ ok: false, error: toErrorPayload(error) });
  }
});
