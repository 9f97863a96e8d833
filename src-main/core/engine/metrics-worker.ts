import { parentPort } from 'node:worker_threads';
import { toErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { metricsSnapshot, type Grouping } from './metrics-snapshot';

/**
 * The metrics worker: replays and computes calibration snapshots off the backend's event loop, so
 * the live stream (frame pacing, inference results, events) never waits for a recomputation.
 */
export interface MetricsRequest {
  id: number;
  trace: Trace;
  settings: GateSettings[];
  version: number;
  options: { lastFrames?: number; groupBy?: Grouping; detail?: 'full' | 'light' };
}

parentPort?.on('message', (request: MetricsRequest) => {
  try {
    const started = performance.now();
    const snapshots = request.settings.map((settings) =>
      metricsSnapshot(request.trace, settings, request.version, request.options),
    );
    parentPort?.postMessage({ id: request.id, ok: true, snapshots, computeMs: performance.now() - started });
  } catch (error) {
    parentPort?.postMessage({ id: request.id, ok: false, error: toErrorPayload(error) });
  }
});
