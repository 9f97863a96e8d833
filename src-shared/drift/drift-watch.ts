import { NO_TEST, type AlarmStatistic } from './alarm-statistic';
import type { ThresholdCalibration } from './false-alarm-threshold';
import { makeStatistic } from './detector-statistic';
import type { DriftAlarm, MonitoredPair, MonitorPlan } from './monitor';

/** A tested pair with its detector fitted to the reference and its calibrated threshold. */
interface ArmedPair {
  pair: number;
  signalIndex: number;
  statistic: AlarmStatistic;
  threshold: number;
}

/**
 * A monitor's detectors armed, stepped one frame at a time: what `runMonitor` runs over a recording
 * after its reference and what the live stream runs as frames arrive, so a live watch and an
 * offline monitor of the same frames raise the same alarms. Each frame gives one value a signal (in
 * the plan's order); a pair's statistic above its threshold is an alarm, and after a frame with an
 * alarm every detector of that signal restarts (its thresholds were calibrated for that:
 * false-alarm-threshold.ts), the next frame the first of their new run.
 */
export class DriftWatch {
  /** Per armed pair, whether it alarmed on the frame being stepped. */
  private readonly alarmed: Uint8Array;

  private constructor(
    private readonly armed: ArmedPair[],
    /** The monitor's pairs, each with the alarms raised so far and why it is not tested, if so. */
    readonly pairs: MonitoredPair[],
    readonly signalNames: string[],
  ) {
    this.alarmed = new Uint8Array(armed.length);
  }

  /**
   * Arms the plan's tested pairs with their calibrations (calibrations[r][k] for
   * plan.requests[r].specs[k]); a pair whose threshold cannot reach the target is left untested and
   * says why.
   */
  static arm(
    plan: MonitorPlan,
    calibrations: ReadonlyArray<readonly ThresholdCalibration[]>,
    signalNames: string[],
  ): DriftWatch {
    const pairs = plan.pairs.map((p) => ({ ...p }));
    const calibrationOfPair = new Map<number, ThresholdCalibration>();
    plan.requests.forEach((request, r) =>
      request.pairs.forEach((pair, k) => calibrationOfPair.set(pair, calibrations[r]![k]!)),
    );
    const armed: ArmedPair[] = [];
    pairs.forEach((pair, index) => {
      const statistic = plan.statistics[index];
      const calibration = calibrationOfPair.get(index);
      if (statistic === null || statistic === undefined || calibration === undefined) return;
      pair.calibration = calibration;
      if (!calibration.reachable) {
        pair.skipped =
          `no threshold reaches the target: in ${calibration.paths} simulated streams of ${calibration.pathFrames} frames ` +
          'the statistic never passed the largest value it took' +
          (pair.detector === 'window-ks' ? ' (a window too short for its values to spread: try a longer one)' : '');
        return;
      }
      armed.push({
        pair: index,
        signalIndex: plan.signalOfPair[index]!,
        statistic: makeStatistic(statistic.spec, statistic.reference),
        threshold: calibration.threshold,
      });
    });
    return new DriftWatch(armed, pairs, signalNames);
  }

  /** One frame: `values[s]` is signal s's value; each alarm it raises goes to `onAlarm`, in pair order. */
  step(frame: number, values: ArrayLike<number>, onAlarm: (alarm: DriftAlarm) => void): void {
    let any = false;
    for (let a = 0; a < this.armed.length; a++) {
      const armed = this.armed[a]!;
      const s = armed.statistic.nextEncoded(armed.statistic.encode(values[armed.signalIndex]!));
      if (s === NO_TEST || !(s > armed.threshold)) continue;
      const pair = this.pairs[armed.pair]!;
      pair.alarms++;
      this.alarmed[a] = 1;
      any = true;
      onAlarm({ frame, signal: pair.signal, detector: pair.detector, statistic: s, threshold: armed.threshold });
    }
    if (!any) return;
    for (let a = 0; a < this.armed.length; a++) {
      if (this.alarmed[a] === 0) continue;
      this.alarmed[a] = 0;
      const signalIndex = this.armed[a]!.signalIndex;
      for (const other of this.armed) if (other.signalIndex === signalIndex) other.statistic.reset();
    }
  }
}
