import { stopIfCancelled } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import { keepLeadingClasses } from '../../../src-shared/trace/kept-classes';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CallContext } from '../calls/call-context';
import { outputLength, writeOutputFile } from '../files/output-files';
import { readTraceFile, traceFileChunks } from '../recording/trace-arrow';

export interface CompactTraceInput {
  input: string;
  /** The kept-class trace written (all or nothing). */
  output: string;
  /** Classes kept a frame. */
  keep: number;
}

export interface CompactTraceResult {
  frames: number;
  classCount: number;
  keep: number;
  inputBytes: number;
  outputBytes: number;
}

/**
 * A recorded trace rewritten with only its leading classes a frame (src-shared/trace/kept-classes.ts):
 * 10 keep + 40 bytes a frame where every class costs 8 K, with its run and provenance as they were.
 * `knob metrics --trace` reads the result, each metric with its stated bound; everything that needs
 * every class refuses it by name. `keep` is checked before the input is read.
 */
export async function compactTrace(input: CompactTraceInput, call: CallContext): Promise<CompactTraceResult> {
  if (!Number.isInteger(input.keep) || input.keep < 2)
    throw new KnobError('INVALID_INPUT', `classes kept a frame must be an integer of at least 2, got ${input.keep}`);
  let inputBytes = 0;
  const file = await readTraceFile(input.input, (read, size) => {
    inputBytes = size;
    call.progress('reading the trace', read, size);
  });
  const { trace } = file;
  stopIfCancelled(call.signal, CANCELLED);
  call.progress('keeping the leading classes', 0, trace.frameCount);
  const kept: Trace = {
    ...trace,
    zStatic: new Float32Array(0),
    zDyn: new Float32Array(0),
    keptClasses: keepLeadingClasses(trace, input.keep),
  };
  stopIfCancelled(call.signal, CANCELLED);
  call.progress('writing the kept-class trace', trace.frameCount, trace.frameCount);
  const chunks = traceFileChunks(kept, file.run, file.context);
  await writeOutputFile(input.output, chunks);
  return {
    frames: trace.frameCount,
    classCount: trace.classCount,
    keep: input.keep,
    inputBytes,
    outputBytes: outputLength(chunks),
  };
}

const CANCELLED = 'compacting the trace was cancelled';
