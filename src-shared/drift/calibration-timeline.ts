import type { GateSettings } from '../gate/gate-settings';
import { frameRateHzOf, type Trace } from '../trace/trace';
import { calibrationOverTime, type CalibrationOverTime, OVER_TIME_METRICS } from './calibration-over-time';

export interface CalibrationTimelineInput {
  trace: Trace;
  settings: GateSettings;
  /** Frames a window and between window starts; null: a minute of the recording's frames, and the window. */
  windowFrames: number | null;
  strideFrames: number | null;
  replicates: number;
  seed: number;
}

export interface CalibrationTimelineResult extends CalibrationOverTime {
  framesPerSecond: number;
  windowFrames: number;
  strideFrames: number;
  metrics: typeof OVER_TIME_METRICS;
  /** Stream time of each window's first frame and of each change point, in seconds. */
  windowSeconds: number[];
  changePointSeconds: number[];
}

/**
 * Calibration over time of a labelled (or partly labelled) recording (`knob timeline`, the desk's
 * Field tab, the run report's figure): the
 * metrics over windows of the recording's own minutes by default, and the change points of its
 * accuracy, with stream times (src-shared/drift/calibration-over-time.ts).
 */
export function calibrationTimeline(input: CalibrationTimelineInput): CalibrationTimelineResult {
  const { trace } = input;
  const framesPerSecond = frameRateHzOf(trace);
  const windowFrames = input.windowFrames ?? Math.max(2, Math.round(60 * framesPerSecond));
  const strideFrames = input.strideFrames ?? windowFrames;
  const result = calibrationOverTime(trace, input.settings, {
    windowFrames,
    strideFrames,
    replicates: input.replicates,
    seed: input.seed,
  });
  return {
    ...result,
    framesPerSecond,
    windowFrames,
    strideFrames,
    metrics: OVER_TIME_METRICS,
    windowSeconds: result.windows.map((w) => trace.timestampsSeconds[w.firstFrame]!),
    changePointSeconds: result.changePoints.map((c) => trace.timestampsSeconds[c.frame]!),
  };
}
