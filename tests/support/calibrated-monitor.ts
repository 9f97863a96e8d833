import { DRIFT_DETECTORS, type FrameSignal, type MonitorPlan, type ThresholdCalibration } from '../../src-shared/drift';
import type { GateSettings } from '../../src-shared/gate/gate-settings';
import type { Trace } from '../../src-shared/trace/trace';
import { monitorTrace } from '../../src-main/core/use-cases/monitor-trace';

/**
 * A drift monitor's plan and calibrated thresholds over `trace` (the use case `knob monitor` and
 * the desk run, both detectors, 20 KS bins): what a live watch is armed with.
 */
export async function calibratedMonitor(
  trace: Trace,
  settings: GateSettings,
  signals: readonly FrameSignal[],
  reference: { start: number; end: number },
  falseAlarmHours: number,
  seed: number,
): Promise<{ plan: MonitorPlan; calibrations: ThresholdCalibration[][] }> {
  let armed: { plan: MonitorPlan; calibrations: ThresholdCalibration[][] } | null = null;
  await monitorTrace({
    trace,
    settings,
    signals,
    reference,
    falseAlarmHours,
    detectors: DRIFT_DETECTORS,
    windowFrames: null,
    strideFrames: null,
    bins: 20,
    seed,
    onCalibrated: (plan, calibrations) => (armed = { plan, calibrations }),
  });
  return armed!;
}
