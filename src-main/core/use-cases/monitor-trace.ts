import {
  FRAME_SIGNALS,
  frameSignals,
  MIN_REFERENCE_FRAMES,
  planMonitor,
  runMonitor,
  type DriftDetector,
  type FrameSignal,
  type MonitorPlan,
  type MonitorSignal,
  type MonitorReport,
  type ThresholdCalibration,
} from '../../../src-shared/drift';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { frameRateHzOf, type Trace } from '../../../src-shared/trace/trace';
import { availableParallelism } from 'node:os';
import { ThresholdThreads } from '../drift/threshold-threads';

export interface MonitorTraceInput {
  trace: Trace;
  settings: GateSettings;
  signals: readonly FrameSignal[];
  /** Frames [start, end) taken as unshifted; null: the first REFERENCE_FRACTION of the recording. */
  reference: { start: number; end: number } | null;
  /** Mean time between false alarms of the whole monitor on unshifted data, in hours of stream time. */
  falseAlarmHours: number;
  detectors: readonly DriftDetector[];
  /** The windowed test's window and stride in frames; null: 10 s and 1 s of the recording's frames. */
  windowFrames: number | null;
  strideFrames: number | null;
  bins: number;
  seed: number;
  signal?: AbortSignal;
  /** Given the plan and its calibrated thresholds, before the monitor runs (what arms a live watch). */
  onCalibrated?: (plan: MonitorPlan, calibrations: ThresholdCalibration[][]) => void;
}

export interface MonitorTraceResult extends MonitorReport {
  framesPerSecond: number;
  falseAlarmHours: number;
  signals: Array<{ name: FrameSignal; description: string }>;
  /** Stream time of each alarm's frame, in seconds, in the order of `alarms`. */
  alarmSeconds: number[];
}

/** The default reference: the first fifth of the recording. */
export const REFERENCE_FRACTION = 0.2;

/**
 * Drift alarms on a recording, labelled or not (`knob monitor`): the chosen per-frame signals at
 * the knobs, each through the chosen detectors with thresholds calibrated on the reference window
 * to the operator's mean time between false alarms, converted to frames at the recording's own
 * frame rate (its timestamps). The reference is checked before any signal is computed; the
 * thresholds, the costly part, are calibrated on threads (threshold-threads.ts), cancellable; the
 * threads (one a signal, at most one a core) start before the signals are computed, so that they
 * load meanwhile. A setting the plan refuses (a window longer than the reference, a target past the
 * simulation's limit) is therefore refused once they have loaded, a few tenths of a second later,
 * and a signal left untested still had its thread load.
 */
export async function monitorTrace(input: MonitorTraceInput): Promise<MonitorTraceResult> {
  const { trace } = input;
  const n = trace.frameCount;
  const reference = input.reference ?? { start: 0, end: Math.floor(n * REFERENCE_FRACTION) };
  if (reference.start < 0 || reference.end > n || reference.end - reference.start < MIN_REFERENCE_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `the reference window ${reference.start}:${reference.end} must lie within the recording's ${n} frames and hold at least ${MIN_REFERENCE_FRAMES}` +
        (input.reference === null ? ` (the default is its first ${REFERENCE_FRACTION * 100} %)` : ''),
    );
  if (reference.end >= n) throw new KnobError('INVALID_INPUT', 'the reference window leaves no frames to monitor');
  const framesPerSecond = frameRateHzOf(trace);
  const referenceFrames = reference.end - reference.start;
  const windowFrames =
    input.windowFrames ?? Math.min(Math.round(10 * framesPerSecond), Math.floor(referenceFrames / 2));
  const strideFrames = input.strideFrames ?? Math.max(1, Math.round(framesPerSecond));
  // started first: they load while the signals are computed
  const threads = new ThresholdThreads(Math.min(availableParallelism(), input.signals.length));
  let signals: MonitorSignal[];
  let plan: MonitorPlan;
  let calibrations: ThresholdCalibration[][];
  try {
    signals = frameSignals(trace, input.settings, input.signals, reference);
    plan = planMonitor(signals, {
      referenceStart: reference.start,
      referenceEnd: reference.end,
      meanFramesBetweenFalseAlarms: input.falseAlarmHours * 3600 * framesPerSecond,
      detectors: input.detectors,
      windowFrames: Math.max(2, windowFrames),
      strideFrames,
      bins: input.bins,
      seed: input.seed,
    });
    calibrations = await threads.calibrate(plan.requests, input.signal);
  } catch (error) {
    await threads.close();
    throw error;
  }
  // the threads end while the monitor runs (a tenth of a second on an hour)
  const closing = threads.close();
  let report: MonitorReport;
  try {
    input.onCalibrated?.(plan, calibrations);
    report = runMonitor(signals, plan, calibrations);
  } finally {
    await closing;
  }
  return {
    ...report,
    framesPerSecond,
    falseAlarmHours: input.falseAlarmHours,
    signals: input.signals.map((name) => ({ name, description: FRAME_SIGNALS[name] })),
    alarmSeconds: report.alarms.map((a) => trace.timestampsSeconds[a.frame]!),
  };
}
