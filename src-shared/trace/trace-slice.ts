import { mapKeptClassArrays } from './kept-classes';
import type { ReplayOutput } from './replay';
import type { MetadataColumn, Trace } from './trace';

/**
 * Frames [from, to) of a trace as a trace of their own: `view` shares the columns (subarrays, for a
 * window of a long recording), `copy` owns them (for saving, or to transfer to a worker while the
 * original keeps growing), `share` views the columns in shared memory (a loaded trace's logits,
 * which a worker thread then reads without a copy) and copies the rest, the labels always (they
 * change). Columns come out exactly to - from frames long either way.
 */
export function sliceTrace(trace: Trace, from: number, to: number, mode: 'view' | 'copy' | 'share'): Trace {
  const k = trace.classCount;
  const cut = <T extends Float32Array | Float64Array | Int32Array | Uint8Array | Uint16Array>(
    array: T,
    start: number,
    end: number,
  ): T =>
    (mode === 'view' || (mode === 'share' && array.buffer instanceof SharedArrayBuffer)
      ? array.subarray(start, end)
      : array.slice(start, end)) as T;
  const column = (c: MetadataColumn): MetadataColumn =>
    c.kind === 'category'
      ? { kind: 'category', codes: cut(c.codes, from, to), dictionary: [...c.dictionary] }
      : { kind: 'number', values: cut(c.values, from, to) };
  return {
    ...trace,
    frameCount: to - from,
    timestampsSeconds: cut(trace.timestampsSeconds, from, to),
    zStatic: cut(trace.zStatic, from * k, to * k),
    zDyn: cut(trace.zDyn, from * k, to * k),
    uRef: cut(trace.uRef, from, to),
    labels:
      trace.labels === null ? null : mode === 'share' ? trace.labels.slice(from, to) : cut(trace.labels, from, to),
    labelNames: [...trace.labelNames],
    metadata: Object.fromEntries(Object.entries(trace.metadata).map(([name, c]) => [name, column(c)])),
    ...(trace.features === undefined
      ? {}
      : {
          features: {
            width: trace.features.width,
            values: cut(trace.features.values, from * trace.features.width, to * trace.features.width),
          },
        }),
    ...(trace.keptClasses === undefined
      ? {}
      : {
          keptClasses: mapKeptClassArrays(trace.keptClasses, (array, perFrame) =>
            cut(array, from * perFrame, to * perFrame),
          ),
        }),
    ...(trace.labelLayers === undefined
      ? {}
      : {
          labelLayers: {
            truth: cut(trace.labelLayers.truth, from, to),
            origin: cut(trace.labelLayers.origin, from, to),
            operator: cut(trace.labelLayers.operator, from, to),
            useCorrections: trace.labelLayers.useCorrections,
          },
        }),
  };
}

/** The first `frameCount` frames of a run's outputs, copied (fused logits are not kept). */
export function copyReplayOutput(output: ReplayOutput, frameCount: number): ReplayOutput {
  return {
    g: output.g.slice(0, frameCount),
    v: output.v.slice(0, frameCount),
    top1: output.top1.slice(0, frameCount),
    confidence: output.confidence.slice(0, frameCount),
    fusedLogits: null,
    settingsVersion: output.settingsVersion.slice(0, frameCount),
    clampedInputs: output.clampedInputs,
  };
}
