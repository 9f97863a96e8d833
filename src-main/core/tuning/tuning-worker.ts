import { parentPort } from 'node:worker_threads';
import { toErrorPayload } from '../../../src-shared/errors';
import type { Trace } from '../../../src-shared/trace/trace';
import { TuningObjective, tuningFigures, type TuningMetric, type TuningPoint } from '../../../src-shared/tuning';

/**
 * One thread of the tuning pool (tuning-pool.ts): holds the trace and its objective, evaluates the
 * settings it is sent. Every message is answered in order with { ok, figures } or the error.
 */
export type TuningWorkerRequest =
  | { kind: 'init'; trace: Trace; frames: Int32Array; metric: TuningMetric }
  | { kind: 'evaluate'; points: TuningPoint[] };

let objective: TuningObjective | null = null;
let hSeconds = 0;

parentPort?.on('message', (request: TuningWorkerRequest) => {
  try {
    if (request.kind === 'init') {
      objective = new TuningObjective(request.trace, request.frames, request.metric);
      hSeconds = request.trace.nominalDtSeconds;
      parentPort?.postMessage({ ok: true, figures: [] });
      return;
    }
    if (objective === null) throw new Error('the tuning worker was asked to evaluate before init');
    const figures = request.points.map((point) => tuningFigures(objective!, point, hSeconds));
    parentPort?.postMessage({ ok: true, figures });
  } catch (error) {
    parentPort?.postMessage({ ok: false, error: toErrorPayload(error) });
  }
});
