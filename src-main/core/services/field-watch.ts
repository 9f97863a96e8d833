import type { ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import { LISTED_ALARMS } from '../../../src-shared/api/field-watch';
import { finiteOrNull } from '../../../src-shared/api/finite-or-null';
import {
  DEFAULT_KS_BINS,
  DEFAULT_REPLICATES,
  DRIFT_DETECTORS,
  type MonitorPlan,
  type ThresholdCalibration,
} from '../../../src-shared/drift';
import { DEFAULT_INTERVAL_DRAWS } from '../../../src-shared/review';
import { sameGateSettings } from '../../../src-shared/gate/gate-settings';
import { keptClassEstimateNote } from '../../../src-shared/trace/kept-classes';
import type { CallContext } from '../calls/call-context';
import { KnobError } from '../../../src-shared/errors';
import { LiveDriftWatch, type DriftWatchTerms } from '../recording/live-drift-watch';
import type { Session } from '../session/session';
import { readReferenceTrace } from '../use-cases/estimate-accuracy';
import { estimateOnThread, reviewOnThread, timelineOnThread } from '../use-cases/field-thread';
import { monitorTrace } from '../use-cases/monitor-trace';

const interval = (v: { value: number | null; low: number; high: number }) => ({
  value: finiteOrNull(v.value),
  low: finiteOrNull(v.low),
  high: finiteOrNull(v.high),
});

/**
 * The unlabelled field in the desk (issue 30): the current recording, as of now, at the knobs now,
 * through the same use cases as `knob monitor`, `knob timeline`, `knob estimate` and `knob review`.
 * Each view names the recording and the knobs' version it was computed for (staleness.ts).
 */
export class FieldWatch {
  /** The last monitor's plan and thresholds, with what they were computed for: what a live watch arms. */
  private lastMonitor: {
    recordingId: number;
    terms: DriftWatchTerms;
    plan: MonitorPlan;
    calibrations: ThresholdCalibration[][];
  } | null = null;

  constructor(private readonly session: Session) {}

  /**
   * Arms the last monitor on the frames recorded from now on, or stops the watch; the answer counts
   * the alarms of every frame recorded until then (the watch's thread has stepped them).
   */
  async watchLive(params: ApiParsedParams<'field.watchLive'>): Promise<ApiResult<'field.watchLive'>> {
    const recording = this.session.requireRecording();
    if (!params.on) recording.driftWatch?.stop('stopped by the operator');
    else {
      const last = this.lastMonitor;
      // the gate the thresholds were calibrated at (an output calibrator since does not matter)
      if (
        last === null ||
        last.recordingId !== recording.id ||
        !sameGateSettings(last.terms.gate, this.session.knobs.current.gate)
      )
        throw new KnobError(
          'NOT_AVAILABLE',
          'watching live needs a drift monitor of this recording at the knobs now: watch for drift first',
        );
      if (!recording.appendable)
        throw new KnobError(
          'NOT_AVAILABLE',
          `recording ${recording.id} is complete: watching live needs a live recording (play a source)`,
        );
      const earlier = recording.driftWatch;
      earlier?.stop('armed again');
      recording.driftWatch = new LiveDriftWatch(
        last.plan,
        last.calibrations,
        last.terms,
        recording.frameCount,
        recording.trace,
        earlier,
        () => recording.onDriftAlarms?.(),
      );
    }
    const watch = recording.driftWatch;
    await watch?.settled();
    const state = watch?.state() ?? null;
    return {
      recordingId: recording.id,
      watching: state?.watching ?? false,
      fromFrame: state?.fromFrame ?? null,
      alarmCount: state?.alarmCount ?? 0,
      stoppedBecause: state?.stoppedBecause ?? null,
    };
  }

  /** The recording as of now (recorded frames never change; labels copied) and the knobs it is seen at. */
  private basis() {
    const recording = this.session.requireRecording();
    const { trace } = recording.frozen();
    const { gate, version } = this.session.knobs.current;
    return { trace, gate, recordingId: recording.id, settingsVersion: version };
  }

  async monitor(params: ApiParsedParams<'field.monitor'>, call: CallContext): Promise<ApiResult<'field.monitor'>> {
    const { trace, gate, recordingId, settingsVersion } = this.basis();
    const started = performance.now();
    const task = `drift thresholds for ${trace.frameCount} frames`;
    const armed: { plan: MonitorPlan | null; calibrations: ThresholdCalibration[][] } = {
      plan: null,
      calibrations: [],
    };
    call.progress(task, 0, null);
    const report = await monitorTrace({
      trace,
      settings: gate,
      signals: params.signals,
      reference: params.reference,
      falseAlarmHours: params.falseAlarmHours,
      detectors: DRIFT_DETECTORS.filter((d) => params.detectors.includes(d)),
      windowFrames: null,
      strideFrames: null,
      bins: DEFAULT_KS_BINS,
      seed: params.seed,
      signal: call.signal,
      onCalibrated: (plan, calibrations) => Object.assign(armed, { plan, calibrations }),
    });
    // what a live watch arms: this monitor's, once it has run to the end
    const { plan, calibrations } = armed;
    if (plan !== null) {
      const reference = { start: plan.options.referenceStart, end: plan.options.referenceEnd };
      const terms = {
        reference,
        falseAlarmHours: params.falseAlarmHours,
        signals: params.signals,
        settingsVersion,
        gate,
      };
      this.lastMonitor = { recordingId, terms, plan, calibrations };
    }
    call.progress(task, 1, 1);
    return {
      recordingId,
      settingsVersion,
      approximation: keptClassEstimateNote(trace) ?? null,
      referenceStart: report.referenceStart,
      referenceEnd: report.referenceEnd,
      monitoredFrames: report.monitoredFrames,
      framesPerSecond: report.framesPerSecond,
      falseAlarmHours: report.falseAlarmHours,
      falseAlarmHoursPerSignal: report.meanFramesBetweenFalseAlarmsPerSignal / report.framesPerSecond / 3600,
      signals: report.signals,
      pairs: report.pairs.map((p) => ({
        signal: p.signal,
        detector: p.detector,
        identity: p.identity,
        skipped: p.skipped ?? null,
        threshold: p.calibration === undefined ? null : finiteOrNull(p.calibration.threshold),
        method: p.calibration?.method ?? null,
        alarms: p.alarms,
      })),
      alarms: report.alarms.slice(0, LISTED_ALARMS).map((a, i) => ({
        frame: a.frame,
        seconds: report.alarmSeconds[i]!,
        signal: a.signal,
        detector: a.detector,
        statistic: finiteOrNull(a.statistic),
        threshold: finiteOrNull(a.threshold),
      })),
      alarmCount: report.alarms.length,
      wallMs: performance.now() - started,
    };
  }

  async timeline(params: ApiParsedParams<'field.timeline'>, call: CallContext): Promise<ApiResult<'field.timeline'>> {
    const { trace, gate, recordingId, settingsVersion } = this.basis();
    const input = {
      trace,
      settings: gate,
      windowFrames: params.windowFrames,
      strideFrames: null,
      replicates: DEFAULT_REPLICATES,
      seed: params.seed,
    };
    const result = await timelineOnThread(input, call.signal);
    const names = Object.keys(result.metrics) as Array<keyof typeof result.metrics>;
    return {
      recordingId,
      settingsVersion,
      approximation: result.approximation ?? null,
      framesPerSecond: result.framesPerSecond,
      windowFrames: result.windowFrames,
      metrics: names.map((name) => ({ name, identity: result.metrics[name] })),
      windows: result.windows.map((w, i) => ({
        firstFrame: w.firstFrame,
        endFrame: w.endFrame,
        seconds: result.windowSeconds[i]!,
        labelledFrames: w.labelledFrames,
        values: names.map((name) => {
          const v = w.values.find((value) => value?.metric === name) ?? null;
          return v === null ? null : interval(v);
        }),
      })),
      changePoints: result.changePoints.map((c, i) => ({
        frame: c.frame,
        seconds: result.changePointSeconds[i]!,
        accuracyBefore: c.accuracyBefore,
        accuracyAfter: c.accuracyAfter,
        pValue: c.pValue,
      })),
      changePointMethod: result.changePointMethod,
    };
  }

  async estimate(params: ApiParsedParams<'field.estimate'>, call: CallContext): Promise<ApiResult<'field.estimate'>> {
    const { trace, gate, recordingId, settingsVersion } = this.basis();
    // the reference must be of the model the recording was made with (else the one loaded)
    const model = this.session.requireRecording().provenance.model ?? this.session.describe().model;
    const referenceTrace =
      params.referenceTrace === null ? null : await readReferenceTrace(params.referenceTrace, model);
    const input = {
      trace,
      settings: gate,
      referenceTrace,
      reference: params.reference,
      by: params.by,
      windowFrames: params.windowFrames,
      replicates: DEFAULT_REPLICATES,
      seed: params.seed,
    };
    const result = await estimateOnThread(input, call.signal);
    return {
      recordingId,
      settingsVersion,
      approximation: result.approximation ?? null,
      referenceTrace: params.referenceTrace,
      referenceStart: result.referenceStart,
      referenceEnd: result.referenceEnd,
      referenceLabelledFrames: result.referenceLabelledFrames,
      referenceAccuracy: result.referenceAccuracy,
      by: result.by,
      methods: result.methods,
      groups: result.groups.map((g) => ({ ...g, estimates: g.estimates.map(interval) })),
      summary: result.summary,
    };
  }

  async review(params: ApiParsedParams<'field.review'>, call: CallContext): Promise<ApiResult<'field.review'>> {
    const { trace, gate, recordingId, settingsVersion } = this.basis();
    const result = await reviewOnThread(
      {
        trace,
        settings: gate,
        window: params.window,
        count: params.count,
        draws: DEFAULT_INTERVAL_DRAWS,
        seed: params.seed,
      },
      call.signal,
    );
    return {
      recordingId,
      settingsVersion,
      approximation: result.approximation ?? null,
      windowStart: result.windowStart,
      windowEnd: result.windowEnd,
      labelledFrames: result.labelledFrames,
      identity: result.identity,
      ece: interval(result.ece),
      queue: result.queue,
    };
  }
}
