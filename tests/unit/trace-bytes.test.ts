/**
 * A trace is written with the same bytes whatever the process did before (trace-arrow.ts): a
 * bundle records its trace's SHA-256, so the desk and `knob export` of one trace must agree.
 * apache-arrow numbers dictionaries from a process-wide counter unless the writer names them.
 */
import { Dictionary, Int32, Utf8 } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { encodeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { syntheticTrace } from '../support/synthetic-trace';

describe('trace bytes', () => {
  it('do not depend on the dictionaries made before them', () => {
    const base = syntheticTrace({ frames: 40 });
    const codes = Int32Array.from({ length: 40 }, (_, i) => (i < 20 ? 0 : 1));
    const trace = {
      ...base,
      metadata: {
        corruption: { kind: 'category' as const, codes, dictionary: ['none', 'fog'] },
        camera: { kind: 'category' as const, codes: new Int32Array(40), dictionary: ['left'] },
      },
    };
    const first = encodeTraceFile(trace, null, {});
    // what another part of the process (or another test) may have done meanwhile
    for (let i = 0; i < 3; i++) void new Dictionary(new Utf8(), new Int32());
    const second = encodeTraceFile(trace, null, {});
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
  });
});
