import { FusedScoreTable, type FusedScoreTableParts } from '../../../src-shared/fusion/fused-score-table';
import type { Trace } from '../../../src-shared/trace/trace';
import {
  TuningObjectives,
  fusedTablesOf,
  type FusedTables,
  type FusedTablesMessage,
  tuningFigures,
  tuningImprovementParts,
  type ImprovementArgs,
  type TuningMetric,
  type TuningPoint,
} from '../../../src-shared/tuning';
import { serve } from '../workers/worker-serve';

/**
 * One thread of the tuning pool (tuning-pool.ts): holds the trace and its objectives, evaluates the
 * settings it is sent, and computes its share of a tune's improvement with its bootstrap (the slow
 * part for the smooth and binned metrics, seconds on hours of held-out frames). Every request is
 * answered under its id (worker-protocol.ts), in order.
 */
export type TuningWorkerRequest =
  | {
      kind: 'table';
      /** The frames these rows are (the table's entries point at them). */
      rows: Int32Array;
      /**
       * 'chunk': row j of zStatic and zDyn is frame rows[j] (copied for the request); 'trace': they
       * are the whole trace's logits in shared memory, indexed by the frames themselves.
       */
      logitRows: 'chunk' | 'trace';
      zStatic: Float32Array;
      zDyn: Float32Array;
      classCount: number;
      temperature: number;
      squares: boolean;
    }
  | {
      kind: 'init';
      trace: Trace;
      /** The search frames, and their screened stride (tuning-search.ts, step 3) where there is one. */
      frames: { search: Int32Array; screened: Int32Array | null };
      metric: TuningMetric;
      tables: FusedTablesMessage | null;
    }
  | { kind: 'evaluate'; points: TuningPoint[]; on: 'search' | 'screened' }
  /** The improvement's parts on the replicates of args' replicateRange (tuningImprovementParts). */
  | { kind: 'improvement'; args: ImprovementArgs };

let trace: Trace | null = null;
let tables: FusedTables | null = null;
let objectives: TuningObjectives | null = null;

/** A chunk's fused-score table, its entries pointing at the chunk's frames. */
function tableOf(request: Extract<TuningWorkerRequest, { kind: 'table' }>): FusedScoreTableParts {
  const { rows, logitRows, zStatic, zDyn, classCount, temperature, squares } = request;
  const table = new FusedScoreTable(classCount, temperature, squares);
  table.extend({ zStatic, zDyn, classCount }, logitRows === 'trace' ? rows : rows.length);
  return { ...table.parts(), rowOf: rows };
}

function answer(request: TuningWorkerRequest): unknown {
  if (request.kind === 'table') return tableOf(request);
  if (request.kind === 'init') {
    trace = request.trace;
    tables = request.tables === null ? null : fusedTablesOf(request.tables);
    objectives = new TuningObjectives(request.trace, request.frames, request.metric, tables);
    return null;
  }
  if (trace === null || objectives === null)
    throw new Error(`the tuning worker was asked to ${request.kind} before init`);
  if (request.kind === 'improvement') return tuningImprovementParts(trace, tables, ...request.args);
  const objective = objectives.on(request.on);
  return request.points.map((point) => tuningFigures(objective, point, trace!.nominalDtSeconds));
}

serve<TuningWorkerRequest, unknown>(answer);
