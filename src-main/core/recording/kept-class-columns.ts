import { Float32, Float64, type Data, type Table } from 'apache-arrow';
import { KnobError } from '../../../src-shared/errors';
import { allocateKeptClassLogits, type KeptClassLogits } from '../../../src-shared/trace/kept-classes';
import { column, listRows, numbers, primitive, rowsOf } from './arrow-columns';

/**
 * The columns of a kept-class trace (src-shared/trace/kept-classes.ts), in place of z_static and
 * z_dyn: kept_class (fixed_size_list<uint16>[keep]), kept_z_static and kept_z_dyn
 * (fixed_size_list<float32>[keep]), rest_lse_static, rest_lse_dyn, rest_slope_static and
 * rest_slope_dyn (float64), rest_max_static and rest_max_dyn (float32). pandas and Polars read them
 * as any other list and number columns.
 */
export const KEPT_CLASS_COLUMNS = [
  'kept_class',
  'kept_z_static',
  'kept_z_dyn',
  'rest_lse_static',
  'rest_lse_dyn',
  'rest_max_static',
  'rest_max_dyn',
  'rest_slope_static',
  'rest_slope_dyn',
] as const;

export function keptClassColumns(kept: KeptClassLogits, n: number): Array<[string, Data]> {
  const { keep } = kept;
  return [
    ['kept_class', rowsOf(kept.classes.subarray(0, n * keep), keep, 'class')],
    ['kept_z_static', rowsOf(kept.zStatic.subarray(0, n * keep), keep)],
    ['kept_z_dyn', rowsOf(kept.zDyn.subarray(0, n * keep), keep)],
    ['rest_lse_static', primitive(new Float64(), kept.restLseStatic.subarray(0, n))],
    ['rest_lse_dyn', primitive(new Float64(), kept.restLseDyn.subarray(0, n))],
    ['rest_max_static', primitive(new Float32(), kept.restMaxStatic.subarray(0, n))],
    ['rest_max_dyn', primitive(new Float32(), kept.restMaxDyn.subarray(0, n))],
    ['rest_slope_static', primitive(new Float64(), kept.restSlopeStatic.subarray(0, n))],
    ['rest_slope_dyn', primitive(new Float64(), kept.restSlopeDyn.subarray(0, n))],
  ];
}

/**
 * The kept-class logits of a table whose schema was checked (trace-schema.ts), `keep` classes a
 * frame as the kept_class column's width says; validateTrace checks their content.
 */
export function readKeptClassColumns(table: Table, n: number, fileBytes: number, path: string): KeptClassLogits {
  const field = table.schema.fields.find((f) => f.name === 'kept_class');
  const keep = (field?.type as { listSize?: number } | undefined)?.listSize ?? 0;
  // what the kept columns cost a frame, against what the file holds, before anything is allocated
  if (!(keep > 0) || n * (keep * 10 + 40) > 2 * fileBytes + 1024 * 1024)
    throw new KnobError('INVALID_TRACE', `${path}: column 'kept_class' is not rows of class indices the file holds`);
  const kept = allocateKeptClassLogits(0, keep);
  kept.classes = listRows<Uint16Array>(column(table, 'kept_class', path), n, keep, 'kept_class', path, Uint16Array);
  kept.zStatic = listRows(column(table, 'kept_z_static', path), n, keep, 'kept_z_static', path);
  kept.zDyn = listRows(column(table, 'kept_z_dyn', path), n, keep, 'kept_z_dyn', path);
  kept.restLseStatic = numbers(column(table, 'rest_lse_static', path), Float64Array);
  kept.restLseDyn = numbers(column(table, 'rest_lse_dyn', path), Float64Array);
  kept.restMaxStatic = numbers(column(table, 'rest_max_static', path), Float32Array);
  kept.restMaxDyn = numbers(column(table, 'rest_max_dyn', path), Float32Array);
  kept.restSlopeStatic = numbers(column(table, 'rest_slope_static', path), Float64Array);
  kept.restSlopeDyn = numbers(column(table, 'rest_slope_dyn', path), Float64Array);
  return kept;
}
