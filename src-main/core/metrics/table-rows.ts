import { FusedScoreTable, type FusedScoreTableParts } from '../../../src-shared/fusion/fused-score-table';
import type { LogitArray } from '../../../src-shared/fusion/logits';

/**
 * A share of a recording's fused-score table (fused-score-table.ts) for another thread to build:
 * rows [from, to) of logits it reads in place (shared memory), at a temperature. The parts come
 * back with their entries pointing at those rows, for FusedScoreTable.merge after the rows before.
 */
export interface TableRowsRequest {
  zStatic: LogitArray;
  zDyn: LogitArray;
  classCount: number;
  temperature: number;
  squares: boolean;
  from: number;
  to: number;
}

export function tableOfRows(request: TableRowsRequest): FusedScoreTableParts {
  const { zStatic, zDyn, classCount, from, to } = request;
  const table = new FusedScoreTable(classCount, request.temperature, request.squares);
  table.extend(
    { zStatic, zDyn, classCount },
    Int32Array.from({ length: to - from }, (_, j) => from + j),
  );
  return table.parts();
}
