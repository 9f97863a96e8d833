import {
  DriftWatch,
  frameSignalScratch,
  frameSignalsAt,
  type DriftAlarm,
  type FrameSignal,
  type FrameSignalScratch,
} from '../../../src-shared/drift';
import { KnobError } from '../../../src-shared/errors';
import { serve } from '../workers/worker-serve';
import { batchBuffersOf, type LiveWatchRequest, type LiveWatchResult } from './live-watch-thread';

/**
 * A live drift watch's thread (issue 30: detectors on the live path off the main thread): the
 * detectors a monitor calibrated, armed once, stepped over each batch of frames the recording sends
 * (the same frameSignalsAt and DriftWatch as the offline monitor, so the same alarms). One watch a
 * thread; requests are answered one at a time in the order sent, which is the frames' order.
 */
let armed: { watch: DriftWatch; signals: FrameSignal[]; values: Float64Array; scratch: FrameSignalScratch } | null =
  null;

function answer(request: LiveWatchRequest): LiveWatchResult {
  if (request.kind === 'arm') {
    const watch = DriftWatch.arm(request.plan, request.calibrations, request.signals);
    armed = {
      watch,
      signals: request.signals,
      values: new Float64Array(request.signals.length),
      scratch: frameSignalScratch(request.classCount, request.references),
    };
    return {
      pairs: watch.pairs.map((p) => ({
        signal: p.signal,
        detector: p.detector,
        identity: p.identity,
        threshold: p.calibration?.threshold ?? null,
        skipped: p.skipped ?? null,
      })),
    };
  }
  if (armed === null) throw new KnobError('INTERNAL', 'frames came to the drift watch thread before it was armed');
  const { watch, signals, values, scratch } = armed;
  const alarms: DriftAlarm[] = [];
  const { firstFrame, rowFrame, rows, g } = request;
  for (let b = 0; b < g.length; b++) {
    const i = firstFrame + b;
    frameSignalsAt(rows, i - rowFrame, i, g[b]!, signals, values, scratch);
    watch.step(i, values, (alarm) => alarms.push(alarm));
  }
  const buffer = (array: Float32Array | Float64Array | undefined) =>
    array === undefined || array.length === 0 ? null : (array.buffer as ArrayBuffer);
  const buffers = {
    zStatic: buffer(rows.zStatic),
    zDyn: buffer(rows.zDyn),
    uRef: buffer(rows.uRef),
    features: buffer(rows.features?.values),
    g: buffer(g),
  };
  return { alarms, buffers };
}

serve<LiveWatchRequest, LiveWatchResult>(answer, { transferOf: batchBuffersOf });
