import type { MetricSuiteOptions } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { scoreRowsInto, topLabelRowsInto } from '../../../src-shared/metrics/scores';
import { serve } from '../workers/worker-serve';
import { takeSuiteWork, type SharedSuiteArrays } from './shared-suite-arrays';
import { scoreFusedShare, type SharedFusedRows } from './shared-fused-rows';
import type { FusedScoreTableParts } from '../../../src-shared/fusion/fused-score-table';
import { tableOfRows, type TableRowsRequest } from './table-rows';
import type { CalibratorComparison } from '../../../src-shared/calibrators';
import { compareRequested, type CalibratorsRequest } from './calibrators-request';

/**
 * The second thread of the parallel metric suite (parallel-metric-suite.ts): the softmax (when
 * the suite starts from logits) and top-label pairs of the rows it is given, or the fused top-label
 * scores of a share of a trace's frames, or the fused-score table of a share of a recording's rows;
 * then work from the shared counter until none is left.
 * Every request is answered under its id (worker-protocol.ts) with the tasks' results (none for rows).
 */
export type HelperRequest =
  | { kind: 'rows'; arrays: SharedSuiteArrays; from: number; to: number }
  | { kind: 'fused-rows'; rows: SharedFusedRows; from: number; to: number }
  | { kind: 'table-rows'; rows: TableRowsRequest }
  /** Answered at once: the thread serves (ParallelMetricSuite waits for it before handing work over). */
  | { kind: 'ping' }
  | { kind: 'work'; arrays: SharedSuiteArrays; options: MetricSuiteOptions }
  /** Some of a calibrator comparison's methods, fitted and evaluated here (calibrators-alongside.ts). */
  | { kind: 'calibrators'; comparison: CalibratorsRequest };

serve<HelperRequest, Array<[string, MetricValue[]]> | FusedScoreTableParts | CalibratorComparison>(
  (request, context) => {
    if (request.kind === 'ping') return [];
    // polls the call's shared cancel flag between fits and optimiser steps
    if (request.kind === 'calibrators') return compareRequested(request.comparison, context.signal);
    if (request.kind === 'table-rows') return tableOfRows(request.rows);
    if (request.kind === 'fused-rows') {
      scoreFusedShare(request.rows, request.from, request.to);
      return [];
    }
    const { arrays } = request;
    if (request.kind === 'work') return takeSuiteWork(arrays, request.options);
    const { from, to } = request;
    if (arrays.helperLogits !== null)
      scoreRowsInto(arrays.helperLogits, arrays.labels, arrays.classCount, from, to, arrays);
    else topLabelRowsInto(arrays.probabilities, arrays.labels, arrays.classCount, from, to, arrays.top);
    return [];
  },
);
