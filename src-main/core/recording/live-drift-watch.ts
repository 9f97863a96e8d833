import {
  DriftWatch,
  featureSignalReferences,
  frameSignalScratch,
  frameSignalsAt,
  type DriftAlarm,
  type FrameSignal,
  type FrameSignalScratch,
  type MonitorPlan,
  type ThresholdCalibration,
} from '../../../src-shared/drift';
import { sameGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';

/** What a watch was armed with, as the trace file keeps it (its context's `driftWatch`). */
export interface DriftWatchTerms {
  /** The monitor's reference window and its mean time between false alarms (hours of stream time). */
  reference: { start: number; end: number };
  falseAlarmHours: number;
  signals: FrameSignal[];
  /** The knobs' version and gate settings the thresholds were calibrated at. */
  settingsVersion: number;
  gate: GateSettings;
}

/** Alarms a watch keeps in the recording (and its trace file); past it, it counts them. */
export const KEPT_LIVE_ALARMS = 100_000;

/**
 * A drift monitor watching a live recording: the detectors a `field.monitor` calibrated, armed at
 * the frame the operator asked and stepped on each frame as it is recorded (src-shared's DriftWatch,
 * the same stepping as the offline monitor, on the same per-frame signals). Its alarms stay with the
 * recording: the stream's updates carry the new ones, and a saved trace keeps them all.
 */
export class LiveDriftWatch {
  readonly alarms: DriftAlarm[] = [];
  alarmCount = 0;
  private pending: DriftAlarm[] = [];
  private readonly values: Float64Array;
  private readonly scratch: FrameSignalScratch;
  private readonly watch: DriftWatch;

  /** The gate settings last seen, and whether they are those the watch was armed at. */
  private lastSettings: GateSettings | null = null;
  private sameKnobs = true;

  constructor(
    plan: MonitorPlan,
    calibrations: ReadonlyArray<readonly ThresholdCalibration[]>,
    readonly terms: DriftWatchTerms,
    /** The first frame it watches. */
    readonly fromFrame: number,
    /** The recording (its reference frames give the feature signals their statistics). */
    trace: Trace,
    /** The watch this one replaced on the recording: its alarms stay, and go out with this one's. */
    private readonly earlier: LiveDriftWatch | null = null,
  ) {
    this.watch = DriftWatch.arm(plan, calibrations, terms.signals);
    this.values = new Float64Array(terms.signals.length);
    this.scratch = frameSignalScratch(trace.classCount, featureSignalReferences(trace, terms.signals, terms.reference));
  }

  /** Why it stopped watching (null while it watches); its alarms stay. */
  stoppedBecause: string | null = null;

  stop(reason: string): void {
    this.stoppedBecause ??= reason;
  }

  /**
   * Frame i was just recorded, the gate at it `g`, under the gate `settings`. A frame at other gate
   * settings stops the watch: its thresholds hold for the signals at the knobs they were calibrated
   * at (an output calibrator does not matter: the signals are the fused output's).
   */
  step(trace: Trace, i: number, g: number, settings: GateSettings): void {
    if (this.stoppedBecause !== null) return;
    if (settings !== this.lastSettings) {
      this.lastSettings = settings;
      this.sameKnobs = sameGateSettings(settings, this.terms.gate);
    }
    if (!this.sameKnobs) {
      this.stop(`the knobs moved (frame ${i})`);
      return;
    }
    frameSignalsAt(trace, i, g, this.terms.signals, this.values, this.scratch);
    this.watch.step(i, this.values, (alarm) => {
      this.alarmCount++;
      if (this.alarms.length >= KEPT_LIVE_ALARMS) return;
      this.alarms.push(alarm);
      this.pending.push(alarm);
    });
  }

  /** The alarms raised since the last call (what the next stream update carries), the replaced watch's first. */
  takeNew(): DriftAlarm[] {
    const taken = this.pending;
    this.pending = [];
    const earlier = this.earlier?.takeNew() ?? [];
    return earlier.length === 0 ? taken : [...earlier, ...taken];
  }

  /** How it stands, as the stream's updates and field.watchLive say. */
  state(): { watching: boolean; fromFrame: number; alarmCount: number; stoppedBecause: string | null } {
    return {
      watching: this.stoppedBecause === null,
      fromFrame: this.fromFrame,
      alarmCount: this.alarmCount,
      stoppedBecause: this.stoppedBecause,
    };
  }

  /** The watch as a trace file keeps it. */
  record(): Record<string, unknown> {
    return {
      ...this.terms,
      fromFrame: this.fromFrame,
      stoppedBecause: this.stoppedBecause,
      pairs: this.watch.pairs.map((p) => ({
        signal: p.signal,
        detector: p.detector,
        identity: p.identity,
        threshold: p.calibration?.threshold ?? null,
        skipped: p.skipped ?? null,
      })),
      alarmCount: this.alarmCount,
      alarms: this.alarms.map((a) => ({ ...a })),
      /** The watches armed on the recording before this one, each with its alarms. */
      earlier: this.earlier?.record() ?? null,
    };
  }
}
