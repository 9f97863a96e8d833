import type { BinningChoice } from '../../../src-shared/metrics/binning-choice';
import type { MetricsOptions } from '../../../src-shared/api/contract';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { CalibratorSpec } from '../../../src-shared/calibrators';
import type { ApiParsedParams } from '../../../src-shared/api/contract';
import { HeldRecording, type RecordingRows, type TableProgress } from './held-recording';
import { compareSnapshots, metricsSnapshotOnTwoThreads } from './metrics-snapshot';
import { conformalSets } from './conformal-view';
import { compareOutputCalibrators, compareRecentRuns, type RecentRunTrace } from './view-comparisons';
import type { MetricsAnswer, MetricsResult } from './metrics-worker-client';
import { serve } from '../workers/worker-serve';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { ParallelMetricSuite } from '../metrics/parallel-metric-suite';

/**
 * The metrics worker: replays and computes calibration snapshots and A/B comparisons off the
 * backend's event loop, so the live stream (frame pacing, inference results, events) never waits
 * for a recomputation. It holds the current recording between requests (held-recording.ts): a
 * 'rows' message brings what was added since, and the views are computed from what it holds.
 */
interface Common {
  version: number;
  recordingId: number;
  calibrator: CalibratorSpec | null;
}

export type MetricsRequest =
  | { kind: 'rows'; rows: RecordingRows }
  | (Common & { kind: 'snapshot'; settings: GateSettings; options: Partial<MetricsOptions> })
  | (Common & { kind: 'compare'; a: GateSettings; b: GateSettings; lastFrames?: number; binning: BinningChoice })
  | (Common & { kind: 'calibrators'; settings: GateSettings } & ApiParsedParams<'calibrator.compare'>)
  | (Common & { kind: 'conformal'; settings: GateSettings; request: ApiParsedParams<'conformal.sets'> })
  | { kind: 'runs'; runs: RecentRunTrace[] };

let held: HeldRecording | null = null;

function recording(request: Common): HeldRecording {
  if (held === null || held.recordingId !== request.recordingId)
    throw new Error(`the metrics worker does not hold recording ${request.recordingId}`);
  return held;
}

/** The suite's second thread, started with the first view that is large enough to use it. */
const parallel = new ParallelMetricSuite();

async function compute(
  request: Exclude<MetricsRequest, { kind: 'rows' }>,
  onProgress: TableProgress,
  signal: CancelSignal,
): Promise<MetricsResult> {
  if (request.kind === 'runs') return { kind: 'runs', comparison: compareRecentRuns(request.runs, signal) };
  const basis = { version: request.version, recordingId: request.recordingId, calibrator: request.calibrator };
  const source = recording(request);
  switch (request.kind) {
    case 'snapshot':
      return {
        kind: 'snapshot',
        snapshot: await metricsSnapshotOnTwoThreads(
          source,
          request.settings,
          basis,
          request.options,
          onProgress,
          parallel,
          signal,
        ),
      };
    case 'compare':
      return {
        kind: 'compare',
        comparison: compareSnapshots(source, request.a, request.b, basis, request.lastFrames, signal, request.binning),
      };
    case 'conformal':
      return { kind: 'conformal', sets: conformalSets(source, request.settings, basis, request.request, signal) };
    case 'calibrators':
      return {
        kind: 'calibrators',
        comparison: await compareOutputCalibrators(
          source,
          request.settings,
          basis,
          request,
          { onProgress, signal },
          parallel,
        ),
      };
  }
}

serve<MetricsRequest, MetricsAnswer | null>(async (request, context) => {
  if (request.kind === 'rows') {
    held = HeldRecording.apply(held, request.rows);
    return null;
  }
  const started = performance.now();
  const result = await compute(request, (done, total, stage) => context.progress(done, total, stage), context.signal);
  return { result, computeMs: performance.now() - started };
});
