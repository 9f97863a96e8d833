/**
 * The optional `features` column of a trace file (src-main/core/recording/trace-arrow.ts): it
 * round-trips exactly, slices with the trace, and a file whose list width does not match the values
 * it holds (for the features or the logits) is refused with INVALID_TRACE naming the column, instead
 * of being read askew or zero-filled.
 */
import { writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Field,
  FixedSizeList,
  Float32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  type Data,
} from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { encodeTraceFile, readTraceFile, traceToTable } from '../../src-main/core/recording/trace-arrow';
import { sliceTrace } from '../../src-shared/trace/trace-slice';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-trace-features-'));
const frames = 120;
const width = 24;
const trace = {
  ...syntheticTrace({ frames, seed: 3 }),
  features: { width, values: Float32Array.from({ length: frames * width }, (_, i) => Math.abs(Math.sin(i))) },
};

/** The trace's table with one column replaced by `data` (a list of `listWidth` over `values`). */
function fileWithColumn(name: string, listWidth: number, values: Float32Array): string {
  const table = traceToTable(trace, null);
  const fields = table.schema.fields.map((f) =>
    f.name === name ? new Field(name, new FixedSizeList(listWidth, new Field('item', new Float32(), false)), false) : f,
  );
  const child = makeData({ type: new Float32(), length: values.length, data: values });
  const children = table.schema.fields.map((f) =>
    f.name === name
      ? (makeData({ type: fields.find((g) => g.name === name)!.type, length: frames, child } as never) as Data)
      : table.getChild(f.name)!.data[0]!,
  );
  const schema = new Schema(fields, table.schema.metadata);
  const struct = makeData({ type: new Struct(fields), length: frames, nullCount: 0, children });
  const path = join(dir, `${name}-${listWidth}.arrow`);
  writeFileSync(path, tableToIPC(new Table(schema, [new RecordBatch(schema, struct)]), 'file'));
  return path;
}

describe('the features column of a trace file', () => {
  it('round-trips exactly and slices with the trace', async () => {
    const path = join(dir, 'ok.arrow');
    writeFileSync(path, encodeTraceFile(trace, null, {}));
    const read = (await readTraceFile(path)).trace;
    expect(read.features?.width).toBe(width);
    expect(Array.from(read.features!.values)).toEqual(Array.from(trace.features.values));
    const slice = sliceTrace(read, 10, 20, 'copy');
    expect(Array.from(slice.features!.values)).toEqual(
      Array.from(trace.features.values.subarray(10 * width, 20 * width)),
    );
  });

  it('refuses a list width that does not match the values it holds, for features and logits alike', async () => {
    for (const declared of [width + 1, width - 4]) {
      await expect(readTraceFile(fileWithColumn('features', declared, trace.features.values))).rejects.toThrow(
        `column 'features' holds ${frames * width} values, not ${frames} rows of ${declared}`,
      );
    }
    const shortLogits = trace.zStatic.subarray(0, 50 * 10);
    await expect(readTraceFile(fileWithColumn('z_static', 10, Float32Array.from(shortLogits)))).rejects.toThrow(
      /column 'z_static' holds 500 values, not 120 rows of 10/,
    );
  });

  it('refuses to write features that do not make a whole row per frame', () => {
    expect(() => encodeTraceFile({ ...trace, features: { width: 0, values: new Float32Array(0) } }, null, {})).toThrow(
      /features of width 0/,
    );
  });
});
