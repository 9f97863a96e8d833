import { parentPort } from 'node:worker_threads';
import type { MetricsOptions } from '../../../src-shared/api/contract';
import { toErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { compareSnapshots, metricsSnapshot } from './metrics-snapshot';
import type { MetricsReply } from './metrics-worker-client';

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
}

export type MetricsRequest =
  | (Common & { kind: 'snapshot'; settings: GateSettings; options: MetricsOptions })
  | (Common & { kind: 'compare'; a: GateSettings; b: GateSettings; lastFrames?: number });

parentPort?.on('message', (request: MetricsRequest) => {
  let reply: MetricsReply;
  try {
    const started = performance.now();
    const computedFrom = { version: request.version, recordingId: request.recordingId };
    const result =
      request.kind === 'snapshot'
        ? {
            kind: 'snapshot' as const,
            snapshot: metricsSnapshot(request.trace, request.settings, computedFrom, request.options),
          }
        : {
            kind: 'compare' as const,
            comparison: compareSnapshots(request.trace, request.a, request.b, computedFrom, request.lastFrames),
          };
    reply = { id: request.id, ok: true, result, computeMs: performance.now() - started };
  } catch (error) {
    reply = { id: request.id, ok: false, error: toErrorPayload(error) };
  }
  parentPort?.postMessage(reply);
});
