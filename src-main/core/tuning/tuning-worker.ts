import type { Trace } from '../../../src-shared/trace/trace';
import {
  TuningObjective,
  tuningFigures,
  tuningImprovement,
  type ImprovementArgs,
  type TuningMetric,
  type TuningPoint,
} from '../../../src-shared/tuning';
import { serve } from '../workers/worker-serve';

/**
 * One thread of the tuning pool (tuning-pool.ts): holds the trace and its objective, evaluates the
 * settings it is sent, and computes a tune's improvement with its bootstrap (the slow part for the
 * smooth and binned metrics). Every request is answered under its id (worker-protocol.ts), in order.
 */
export type TuningWorkerRequest =
  | { kind: 'init'; trace: Trace; frames: Int32Array; metric: TuningMetric }
  | { kind: 'evaluate'; points: TuningPoint[] }
  | { kind: 'improvement'; args: ImprovementArgs };

let trace: Trace | null = null;
let objective: TuningObjective | null = null;

function answer(request: TuningWorkerRequest): unknown {
  if (request.kind === 'init') {
    trace = request.trace;
    objective = new TuningObjective(request.trace, request.frames, request.metric);
    return null;
  }
  if (trace === null || objective === null)
    throw new Error(`the tuning worker was asked to ${request.kind} before init`);
  if (request.kind === 'improvement') return tuningImprovement(trace, ...request.args);
  return request.points.map((point) => tuningFigures(objective!, point, trace!.nominalDtSeconds));
}

serve<TuningWorkerRequest, unknown>(answer);
