import { parentPort } from 'node:worker_threads';
import type { MetricsOptions } from '../../../src-shared/api/contract';
import { toErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { metricsSnapshot } from './metrics-snapshot';
import type { MetricsReply } from './metrics-worker-client';

/**
 * The metrics worker: replays and computes calibration snapshots off the backend's event loop, so
 * the live stream (frame pacing, inference results, events) never waits for a recomputation.
 */
export interface MetricsRequest {
  id: number;
  trace: Trace;
  settings: GateSettings[];
  version: number;
  recordingId: number;
  options: MetricsOptions;
}

parentPort?.on('message', (request: MetricsRequest) => {
  let reply: MetricsReply;
  try {
    const started = performance.now();
    const snapshots = request.settings.map((settings) =>
      metricsSnapshot(
        request.trace,
        settings,
        { version: request.version, recordingId: request.recordingId },
        request.options,
      ),
    );
    reply = { id: request.id, ok: true, snapshots, computeMs: performance.now() - started };
  } catch (error) {
    reply = { id: request.id, ok: false, error: toErrorPayload(error) };
  }
  parentPort?.postMessage(reply);
});
