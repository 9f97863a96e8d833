import { KnobError } from '../errors';
import type { LabelLayerColumns } from '../labels/label-layers';
import { FRAME_INTERVAL_RANGE_SECONDS, isInRange, outOfRangeMessage } from '../gate/accepted-ranges';
import { validateKeptClasses, type KeptClassLogits } from './kept-classes';

/**
 * A Trace: what the model said about each frame of a stream, in columns (ARCHITECTURE.md).
 * Everything after the model is a pure function of (Trace, settings).
 *
 * Layout: logits row-major (frame i occupies [i K, (i + 1) K)), float32 as models emit them;
 * timestamps in seconds, float64; labels -1 where unknown.
 */
export const TRACE_FORMAT_VERSION = 1;

/** Per-frame metadata: numbers (severity, frame index, seed) or categories (corruption name). */
export type MetadataColumn =
  { kind: 'number'; values: Float64Array } | { kind: 'category'; codes: Int32Array; dictionary: string[] };

export interface Trace {
  formatVersion: number;
  frameCount: number;
  classCount: number;
  timestampsSeconds: Float64Array;
  zStatic: Float32Array;
  zDyn: Float32Array;
  uRef: Float32Array;
  /** True class per frame, -1 when unknown; null when the stream has no labels at all. */
  labels: Int32Array | null;
  labelNames: string[];
  metadata: Record<string, MetadataColumn>;
  /** Interval assumed before the first frame (declared frame period of the source). */
  nominalDtSeconds: number;
  /**
   * The model's `features` output per frame (row-major, `width` values a frame), when the recording
   * asked for it (opt-in: at 192 float32 a frame it is ten times the rest of a trace). Density- and
   * proximity-aware calibrators need it; nothing else reads it.
   */
  features?: TraceFeatures;
  /**
   * The label layers (src-shared/labels/label-layers.ts) when the recording has imported labels or
   * operator corrections: `labels` is then the effective column the metrics read, and a trace file
   * keeps the truth in its `label` column with the corrections beside it (never over it).
   */
  labelLayers?: LabelLayerColumns;
  /**
   * Set when the trace holds only its leading classes a frame (kept-classes.ts, `knob compact`):
   * `zStatic` and `zDyn` are then empty, and only what reads kept classes by name takes the trace
   * (validateTrace refuses it for everything else, naming what it keeps).
   */
  keptClasses?: KeptClassLogits;
}

export interface TraceFeatures {
  width: number;
  values: Float32Array;
}

export const UNKNOWN_LABEL = -1;

/**
 * Checks a trace before anything is computed from it, so a bad frame is reported by index up front
 * instead of half-way through a replay. Throws INVALID_TRACE naming the field and the frame.
 */
/**
 * Whether the first `length` float32 values are all finite, by summing them in float64: a NaN or
 * an infinity makes the sum so, and finite float32 values cannot overflow it (2^53 of them stay
 * below 1e55). One add a value instead of a test and a call: the check was a fifth of
 * `knob metrics --trace` on an hour at 1,000 classes. The caller then finds the culprit.
 */
function allFinite(values: Float32Array, length: number): boolean {
  let sum = 0;
  for (let i = 0; i < length; i++) sum += values[i]!;
  return Number.isFinite(sum);
}

export function validateTrace(trace: Trace, logits: 'every class' | 'kept classes too' = 'every class'): void {
  const fail = (message: string): never => {
    throw new KnobError('INVALID_TRACE', message);
  };
  const { frameCount: n, classCount: k } = trace;
  if (trace.keptClasses !== undefined && logits === 'every class')
    fail(
      `the trace keeps ${trace.keptClasses.keep} of its ${k} classes a frame (a kept-class trace): \`knob metrics --trace\` (without --every-class) and \`knob replay\` read it, with the bounds that implies; everything else needs every class`,
    );
  if (trace.formatVersion > TRACE_FORMAT_VERSION) {
    fail(`trace format version ${trace.formatVersion} is newer than this app reads (${TRACE_FORMAT_VERSION})`);
  }
  if (!Number.isInteger(n) || n < 0) fail(`frameCount ${n} is not a non-negative integer`);
  if (!Number.isInteger(k) || k < 1) fail(`classCount ${k} is not a positive integer`);
  if (trace.timestampsSeconds.length < n)
    fail(`timestampsSeconds has ${trace.timestampsSeconds.length} values for ${n} frames`);
  if (trace.uRef.length < n) fail(`u_ref has ${trace.uRef.length} values for ${n} frames`);
  if (trace.keptClasses !== undefined) validateKeptClasses(trace.keptClasses, n, k, trace.labels);
  else {
    if (trace.zStatic.length < n * k) fail(`z_static has ${trace.zStatic.length} values for ${n} x ${k}`);
    if (trace.zDyn.length < n * k) fail(`z_dyn has ${trace.zDyn.length} values for ${n} x ${k}`);
  }
  if (trace.labels !== null && trace.labels.length < n)
    fail(`labels has ${trace.labels.length} values for ${n} frames`);
  // the nominal interval is the source's frame rate (accepted-ranges.ts); the gaps between
  // recorded frames may be anything positive and finite (a paused camera)
  if (!isInRange(trace.nominalDtSeconds, FRAME_INTERVAL_RANGE_SECONDS)) {
    fail(
      `nominalDtSeconds ${trace.nominalDtSeconds}: ${outOfRangeMessage('the nominal frame interval', FRAME_INTERVAL_RANGE_SECONDS)}`,
    );
  }
  const t = trace.timestampsSeconds;
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(t[i])) fail(`timestamp of frame ${i} is not finite`);
    if (i > 0 && !(t[i] > t[i - 1])) fail(`timestamp of frame ${i} (${t[i]} s) does not increase`);
    const u = trace.uRef[i];
    if (u !== u) fail(`u_ref of frame ${i} is NaN`);
  }
  if (trace.keptClasses === undefined && (!allFinite(trace.zStatic, n * k) || !allFinite(trace.zDyn, n * k)))
    for (let i = 0; i < n * k; i++) {
      if (!Number.isFinite(trace.zStatic[i])) fail(`z_static of frame ${Math.floor(i / k)} is not finite`);
      if (!Number.isFinite(trace.zDyn[i])) fail(`z_dyn of frame ${Math.floor(i / k)} is not finite`);
    }
  if (trace.features !== undefined) {
    const { width, values } = trace.features;
    if (!Number.isInteger(width) || width < 1) fail(`features width ${width} is not a positive integer`);
    if (values.length < n * width) fail(`features has ${values.length} values for ${n} x ${width}`);
    for (let i = 0; i < n * width; i++)
      if (!Number.isFinite(values[i])) fail(`features of frame ${Math.floor(i / width)} are not finite`);
  }
  if (trace.labels !== null) {
    for (let i = 0; i < n; i++) {
      const label = trace.labels[i];
      if (label !== UNKNOWN_LABEL && !(label >= 0 && label < k))
        fail(`label of frame ${i} (${label}) is outside 0..${k - 1}`);
    }
  }
}

/** Timestamps i / frameRateHz for a source that declares a constant frame rate. */
export function timestampsFromFrameRate(frameCount: number, frameRateHz: number): Float64Array {
  const t = new Float64Array(frameCount);
  for (let i = 0; i < frameCount; i++) t[i] = i / frameRateHz;
  return t;
}

/** Frames a second of stream time: from the first and last timestamps, else the declared period. */
export function frameRateHzOf(trace: Trace): number {
  const n = trace.frameCount;
  const span = n > 1 ? trace.timestampsSeconds[n - 1]! - trace.timestampsSeconds[0]! : 0;
  return span > 0 ? (n - 1) / span : 1 / trace.nominalDtSeconds;
}
