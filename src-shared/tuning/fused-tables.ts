import {
  FusedScoreTable,
  labelLogitsOf,
  type FusedScoreTableParts,
  type LabelLogits,
} from '../fusion/fused-score-table';
import type { Trace } from '../trace/trace';
import type { TuningMetric } from './tuning-objective';

/**
 * The tuner's per-frame fused-score tables (src-shared/fusion/fused-score-table.ts, issue 29): with
 * many classes, a setting's metric is computed from them in O(1) per frame instead of fusing and
 * scoring K logits a frame, to the same figure within 1e-12. One table per output temperature the
 * tune visits, over the trace's labelled frames (the search's and the held-out ones alike), with the
 * label logits the NLL and Brier need.
 */
export interface FusedTables {
  /** The frames the entries are, increasing (entry j summarises frame frames[j]). */
  frames: Int32Array;
  /** Entry j's label logits in both branches. */
  labelLogits: LabelLogits;
  byTemperature: Map<number, FusedScoreTable>;
}

/** From this many classes on the tables pay: below it fusing the K logits costs less than a table. */
export const FUSED_TABLE_MIN_CLASSES = 32;

/** Whether the tuner scores `metric` from tables on a trace of `classCount` classes (classwise ECE needs every class). */
export function usesFusedTables(metric: TuningMetric, classCount: number): boolean {
  return metric !== 'classwise-ece' && classCount >= FUSED_TABLE_MIN_CLASSES;
}

/** The labels of `frames` of `trace` (each a class). */
export function labelsOf(trace: Trace, frames: Int32Array): Int32Array {
  return Int32Array.from(frames, (frame) => trace.labels![frame]!);
}

/** Whether `metric`'s tables need T2 (only the Brier score's does). */
export const tablesNeedSquares = (metric: TuningMetric): boolean => metric === 'brier';

/** The tables of `frames` at each of `temperatures`, built on this thread (`squares` for Brier). */
export function buildFusedTables(
  trace: Trace,
  frames: Int32Array,
  temperatures: Iterable<number>,
  squares = true,
): FusedTables {
  const byTemperature = new Map<number, FusedScoreTable>();
  for (const temperature of temperatures) {
    const table = new FusedScoreTable(trace.classCount, temperature, squares);
    table.extend(trace, frames);
    byTemperature.set(temperature, table);
  }
  return { frames, labelLogits: labelLogitsOf(trace, frames, labelsOf(trace, frames)), byTemperature };
}

/** The entries of `tables` that are the frames `frames` (each among the tables' frames). */
export function entriesOf(tables: FusedTables, frames: Int32Array): Int32Array {
  const entries = new Int32Array(frames.length);
  let at = 0;
  for (let j = 0; j < frames.length; j++) {
    // both lists increase: one merge-like pass
    while (at < tables.frames.length && tables.frames[at]! < frames[j]!) at++;
    if (tables.frames[at] !== frames[j]) throw new Error(`frame ${frames[j]} is not among the fused tables' frames`);
    entries[j] = at;
  }
  return entries;
}

/** FusedTables as they travel to a thread: plain columns (shared memory stays shared). */
export interface FusedTablesMessage {
  classCount: number;
  frames: Int32Array;
  labelLogits: LabelLogits;
  byTemperature: Array<[number, FusedScoreTableParts]>;
}

export function fusedTablesMessage(tables: FusedTables, classCount: number): FusedTablesMessage {
  const byTemperature = [...tables.byTemperature].map(([t, table]): [number, FusedScoreTableParts] => [
    t,
    table.parts(),
  ]);
  return { classCount, frames: tables.frames, labelLogits: tables.labelLogits, byTemperature };
}

export function fusedTablesOf(message: FusedTablesMessage): FusedTables {
  const byTemperature = new Map(
    message.byTemperature.map(([t, parts]) => [t, FusedScoreTable.wrap(message.classCount, t, parts)]),
  );
  return { frames: message.frames, labelLogits: message.labelLogits, byTemperature };
}
