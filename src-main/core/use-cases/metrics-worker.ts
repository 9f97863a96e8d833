import type { MetricsOptions } from '../../../src-shared/api/contract';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CalibrationMethod, CalibratorSpec, HeldOutSplit } from '../../../src-shared/calibrators';
import {
  compareOutputCalibrators,
  compareRecentRuns,
  compareSnapshots,
  metricsSnapshot,
  type RecentRunTrace,
} from './metrics-snapshot';
import type { MetricsAnswer, MetricsResult } from './metrics-worker-client';
import { serve } from '../workers/worker-serve';

/**
 * The metrics worker: replays and computes calibration snapshots and A/B comparisons off the
 * backend's event loop, so the live stream (frame pacing, inference results, events) never waits
 * for a recomputation.
 */
interface Common {
  trace: Trace;
  version: number;
  recordingId: number;
  calibrator: CalibratorSpec | null;
}

export type MetricsRequest =
  | (Common & { kind: 'snapshot'; settings: GateSettings; options: MetricsOptions })
  | (Common & { kind: 'compare'; a: GateSettings; b: GateSettings; lastFrames?: number })
  | (Common & {
      kind: 'calibrators';
      settings: GateSettings;
      methods: CalibrationMethod[];
      split: HeldOutSplit;
      lastFrames?: number;
    })
  | { kind: 'runs'; a: RecentRunTrace; b: RecentRunTrace };

function compute(request: MetricsRequest): MetricsResult {
  const computedFrom =
    'version' in request
      ? { version: request.version, recordingId: request.recordingId, calibrator: request.calibrator }
      : null;
  switch (request.kind) {
    case 'snapshot':
      return {
        kind: 'snapshot',
        snapshot: metricsSnapshot(request.trace, request.settings, computedFrom!, request.options),
      };
    case 'compare':
      return {
        kind: 'compare',
        comparison: compareSnapshots(request.trace, request.a, request.b, computedFrom!, request.lastFrames),
      };
    case 'runs':
      return { kind: 'runs', comparison: compareRecentRuns(request.a, request.b) };
    case 'calibrators':
      return {
        kind: 'calibrators',
        comparison: compareOutputCalibrators(request.trace, request.settings, computedFrom!, request),
      };
  }
}

serve<MetricsRequest, MetricsAnswer>((request) => {
  const started = performance.now();
  const result = compute(request);
  return { result, computeMs: performance.now() - started };
});
