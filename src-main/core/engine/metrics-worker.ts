import { parentPort } from 'node:worker_threads';
import type { MetricsOptions } from '../../../src-shared/api/contract';
import { toErrorPayload } from '../../../src-shared/errors';
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
import type { MetricsReply, MetricsResult } from './metrics-worker-client';

/**
 * The metrics worker: replays and computes calibration snapshots and A/B comparisons off the
 * backend's event loop, so the live stream (frame pacing, inference results, events) never waits
 * for a recomputation.
 */
interface Common {
  id: number;
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
  | { id: number; kind: 'runs'; a: RecentRunTrace; b: RecentRunTrace };

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

parentPort?.on('message', (request: MetricsRequest) => {
  let reply: MetricsReply;
  try {
    const started = performance.now();
    const result = compute(request);
    reply = { id: request.id, ok: true, result, computeMs: performance.now() - started };
  } catch (error) {
    reply = { id: request.id, ok: false, error: toErrorPayload(error) };
  }
  parentPort?.postMessage(reply);
});
