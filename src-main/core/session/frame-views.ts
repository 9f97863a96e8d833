import type { ApiEventData } from '../../../src-shared/api/contract';
import type { FrameReadout } from '../../../src-shared/trace/frame-readout';
import type { LiveUpdate } from '../engine/live-pipeline';
import type { FrameImage } from '../recording/frame-image-ring';

/*
 * Frames as the API carries them: the live update of each frame, and the readout a scrubbed frame
 * shares with it, so both views show a frame in the same words.
 */

/** A frame's readout as the API carries it: class names on the top classes, an infinite T_eff as null. */
export function readoutToApi(r: FrameReadout, labelNames: string[]) {
  return {
    top: r.top.map((c) => ({ ...c, label: labelNames[c.classIndex] ?? String(c.classIndex) })),
    effectiveTemperature: Number.isFinite(r.effectiveTemperature) ? r.effectiveTemperature : null,
    confidenceShrinkageRatio: r.confidenceShrinkageRatio,
    branchesDisagree: r.branchesDisagree,
    ...(r.calibratorCondition === undefined ? {} : { calibratorCondition: r.calibratorCondition }),
  };
}

export function imageToApi(image: FrameImage) {
  return {
    width: image.width,
    height: image.height,
    channels: image.channels,
    base64: Buffer.from(image.pixels).toString('base64'),
  };
}

export function toApiUpdate(update: LiveUpdate, labelNames: string[]): ApiEventData<'stream.update'> {
  return {
    recordingId: update.recordingId,
    frame: update.frame,
    sourceFrame: update.sourceFrame,
    timestampSeconds: update.timestampSeconds,
    settingsVersion: update.settingsVersion,
    g: update.g,
    uRef: update.uRef,
    label: update.label,
    ...readoutToApi(update.readout, labelNames),
    framesProcessed: update.framesProcessed,
    framesDropped: update.framesDropped,
    endToEndMs: update.endToEndMs,
    rolling: update.rolling.map((m) => ({ name: m.name, identity: m.identity, value: m.value })),
    image: imageToApi(update.image),
    corruption: update.corruption,
    severity: update.severity,
    driftWatch: update.driftWatch,
    driftAlarms: update.driftAlarms.map((alarm) => ({
      frame: alarm.frame,
      seconds: alarm.seconds,
      signal: alarm.signal,
      detector: alarm.detector,
    })),
  };
}
