import { KnobError } from '../errors';
import { clampGate, fuseTop1Into } from '../fusion/convex-fusion';
import { argmaxRow } from '../fusion/logits';
import type { GateSettings } from '../gate/gate-settings';
import { replay } from '../trace/replay';
import type { Trace } from '../trace/trace';
import type { MonitorSignal } from './monitor';

/** What every frame has, labelled or not: the signals a drift monitor can watch. */
export const FRAME_SIGNALS = {
  confidence: "the output's top-1 probability at the knobs (fused; a kept-class trace's estimate)",
  'gate-target': 'u*, the gate target the model gives the frame',
  gate: 'g, the gate at the knobs (clamped to [0, 1])',
  disagreement: "1 where the static and dynamic branches' top-1 differ, else 0 (every class only)",
} as const;
export type FrameSignal = keyof typeof FRAME_SIGNALS;
export const FRAME_SIGNAL_NAMES = Object.keys(FRAME_SIGNALS) as FrameSignal[];
/** What a monitor watches unless told otherwise (the desk and `knob monitor`): what the output says, and u*. */
export const DEFAULT_FRAME_SIGNALS: readonly FrameSignal[] = ['confidence', 'gate-target'];

/**
 * The chosen per-frame signals of a recording at the knobs, by one replay of the gate and the
 * fusion (replay.ts, the kernel every view uses). A kept-class trace gives the confidence as its
 * kept-class estimate and has no disagreement signal (a branch's top-1 may lie outside its kept
 * classes): asked for, it is refused by name.
 */
export function frameSignals(trace: Trace, settings: GateSettings, names: readonly FrameSignal[]): MonitorSignal[] {
  const n = trace.frameCount;
  const replayed = names.some((name) => name === 'confidence' || name === 'gate')
    ? replay(trace, settings, { logits: 'kept classes too' })
    : null;
  return names.map((name) => {
    const values = new Float64Array(n);
    if (name === 'confidence') values.set(replayed!.confidence);
    else if (name === 'gate') for (let i = 0; i < n; i++) values[i] = clampGate(replayed!.g[i]!);
    else if (name === 'gate-target') values.set(trace.uRef);
    else {
      if (trace.keptClasses !== undefined)
        throw new KnobError(
          'INVALID_INPUT',
          `the disagreement signal needs every class of both branches; this trace keeps ${trace.keptClasses.keep} of ${trace.classCount} a frame`,
        );
      values.set(branchDisagreement(trace, 0, n));
    }
    return { name, values };
  });
}

/** Buffers frameSignalsAt works in, made once a stream (nothing is allocated a frame but two views). */
export interface FrameSignalScratch {
  gate: Float64Array;
  top1: Int32Array;
  confidence: Float64Array;
  row: Float64Array;
}

export function frameSignalScratch(classCount: number): FrameSignalScratch {
  return {
    gate: new Float64Array(1),
    top1: new Int32Array(1),
    confidence: new Float64Array(1),
    row: new Float64Array(classCount),
  };
}

/**
 * Frame i's signals, the gate at it being `g` (unclamped), into `out` in the order of `names`: what a
 * live watch reads as each frame is recorded. The same arithmetic as frameSignals: the confidence is
 * the fused output's (replay's fuseTop1Into on that one row, no output calibrator), so a live watch
 * and an offline monitor of the same frames see the same values bit for bit. Every class only.
 */
export function frameSignalsAt(
  trace: Trace,
  i: number,
  g: number,
  names: readonly FrameSignal[],
  out: Float64Array,
  scratch: FrameSignalScratch,
): void {
  const k = trace.classCount;
  names.forEach((name, s) => {
    if (name === 'gate-target') out[s] = trace.uRef[i]!;
    else if (name === 'gate') out[s] = clampGate(g);
    else if (name === 'disagreement')
      out[s] = argmaxRow(trace.zStatic, i * k, k) === argmaxRow(trace.zDyn, i * k, k) ? 0 : 1;
    else {
      scratch.gate[0] = g;
      const row = i * k;
      fuseTop1Into(
        trace.zStatic.subarray(row, row + k),
        trace.zDyn.subarray(row, row + k),
        scratch.gate,
        k,
        0,
        1,
        scratch.top1,
        scratch.confidence,
        null,
        scratch.row,
      );
      out[s] = scratch.confidence[0]!;
    }
  });
}

/** 1 for each frame of [start, end) where the static and dynamic branches' top-1 differ (every class). */
export function branchDisagreement(trace: Trace, start: number, end: number): Uint8Array {
  const k = trace.classCount;
  const out = new Uint8Array(end - start);
  for (let i = start; i < end; i++)
    out[i - start] = argmaxRow(trace.zStatic, i * k, k) === argmaxRow(trace.zDyn, i * k, k) ? 0 : 1;
  return out;
}
