/**
 * Trace files are checked by their schema before any column is materialised (issue 26): an 18 MB
 * trace with 64 boolean columns (each widened to float64 when read) reached 1.16 GB. Through
 * `knob replay` in a process of its own (its peak ru_maxrss, measured-cli.mjs): that file, a known
 * column of the wrong type and a label name of 20 MB are each refused naming the file and the
 * column or field, peak memory under 512 MB; a sound trace with every column still replays.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bool, Field, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, type Data } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { encodeTraceFile, traceToTable } from '../../src-main/core/recording/trace-arrow';
import type { Trace } from '../../src-shared/trace/trace';
import { measuredKnob } from '../support/measured-knob';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-trace-budgets-'));
const PEAK_LIMIT_MB = 512;
const MIB = 1024 * 1024;

/** The trace's table with `extra` boolean columns of alternating bits, and `replace`d columns. */
function fileWith(name: string, trace: Trace, extra: string[], replace: string[] = []): string {
  const table = traceToTable(trace, null);
  const n = trace.frameCount;
  const bits = new Uint8Array(Math.ceil(n / 8)).fill(0x55);
  const bool = (): Data => makeData({ type: new Bool(), length: n, data: bits } as never) as Data;
  const kept = table.schema.fields.filter((f) => !replace.includes(f.name));
  const fields = [
    ...kept,
    ...replace.map((column) => new Field(column, new Bool(), false)),
    ...extra.map((column) => new Field(column, new Bool(), false)),
  ];
  const children = [...kept.map((f) => table.getChild(f.name)!.data[0]!), ...replace.map(bool), ...extra.map(bool)];
  const schema = new Schema(fields, table.schema.metadata);
  const struct = makeData({ type: new Struct(fields), length: n, nullCount: 0, children });
  const path = join(dir, name);
  writeFileSync(path, tableToIPC(new Table(schema, [new RecordBatch(schema, struct)]), 'file'));
  return path;
}

function expectRefused(path: string, message: RegExp): void {
  const result = measuredKnob(['replay', path, '--out', join(dir, 'replayed')]);
  expect(result.status, result.line ?? result.stdout).toBe(1);
  expect(result.line?.startsWith(`knob: ${path}: `), result.line ?? '').toBe(true);
  expect(result.line).toMatch(message);
  expect(result.line).not.toMatch(/internal error/);
  expect(result.peakMb, `peak ${result.peakMb.toFixed(0)} MB`).toBeLessThan(PEAK_LIMIT_MB);
  console.log(
    `${path.split('/').pop()} (${(statSync(path).size / MIB).toFixed(1)} MB): peak ${result.peakMb.toFixed(0)} MB: ${result.line}`,
  );
}

describe(`trace files refused before their columns are materialised, peak under ${PEAK_LIMIT_MB} MB`, () => {
  const frames = 450_000;
  const trace = syntheticTrace({ frames, classCount: 2, seed: 5 });

  it('an 18 MB trace with 64 boolean columns', () => {
    const columns = Array.from({ length: 64 }, (_, i) => `flag_${i}`);
    const path = fileWith('boolean-columns.arrow', trace, columns);
    expect(statSync(path).size).toBeGreaterThan(16 * MIB);
    expectRefused(path, /column 'flag_0' is not a trace column \(a trace holds timestamp_s, z_static/);
  }, 120_000);

  it('a known column of the wrong type', () => {
    const path = fileWith('wrong-type.arrow', trace, [], ['u_ref']);
    expectRefused(path, /column 'u_ref' is Bool, not float32/);
  }, 120_000);

  it('a label name of 20 MB', () => {
    const small = syntheticTrace({ frames: 64, classCount: 2, seed: 6 });
    const path = join(dir, 'long-label.arrow');
    writeFileSync(path, encodeTraceFile({ ...small, labelNames: ['x'.repeat(20 * MIB), 'y'] }, null, {}));
    expectRefused(path, /label name 0 is 20971520 characters long, over the limit of 4096/);
  }, 120_000);

  it('a sound trace still replays', () => {
    const path = join(dir, 'sound.arrow');
    writeFileSync(
      path,
      encodeTraceFile(syntheticTrace({ frames: 300, classCount: 10, seed: 7 }), null, { source: 'synthetic' }),
    );
    const result = measuredKnob(['replay', path, '--out', join(dir, 'sound-out')]);
    expect(result.status, result.line ?? '').toBe(0);
  }, 120_000);
});
