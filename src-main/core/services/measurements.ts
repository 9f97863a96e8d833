import { stepsOfCall } from '../calls/work-steps';
import type { BinningChoice } from '../../../src-shared/metrics/binning-choice';
import { analysisSummaryLines, exceptionTable, severityTable } from '../../../src-shared/analysis';
import type { ApiParsedParams, ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import type { ProbeSourceKind } from '../../../src-shared/api/measurements';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { parseTuningRequest, tuningSplitOf } from '../../../src-shared/tuning';
import type { CallContext } from '../calls/call-context';
import type { MetricsWorkerClient } from '../use-cases/metrics-worker-client';
import { DeskProbes, type ProbeSource } from './desk-probes';
import type { Session } from '../session/session';
import { sourceOf } from '../session/session-states';
import { tuningSummary } from '../tuning/tuning-view';
import { analyseTrace } from '../use-cases/analyse-trace';
import { tuneKnobs } from '../use-cases/tune-knobs';

/**
 * What the desk measures on the current recording at the current knobs, each off the backend's
 * event loop: metrics, A/B and calibrator comparisons (the metrics worker), the paper's analyses
 * (a thread of their own), tuning (the tuning threads), and the gate's probes (recorded through
 * the model once under the session's model lease, replayed at any knobs after).
 */
export class Measurements {
  private readonly probes: DeskProbes;

  constructor(
    private readonly session: Session,
    private readonly metrics: MetricsWorkerClient,
  ) {
    this.probes = new DeskProbes((probe, work) => session.lease.forProbe(probe, work));
  }

  /**
   * Metrics of the current recording replayed at the current knobs, computed in the metrics worker
   * (a long recording's first view reports its tables' progress).
   */
  snapshot(options: MetricsOptions, call: CallContext): Promise<ApiResult<'metrics.snapshot'>> {
    const copy = this.recordingCopy(call.signal);
    return this.metrics.snapshot(copy, this.session.knobs.current.gate, options, (done, total, stage) =>
      call.progress(stage, done, total),
    );
  }

  /** A/B: one recording, two settings, two snapshots and their paired differences; nothing calls the model. */
  compare(
    a: GateSettings,
    b: GateSettings,
    lastFrames: number | undefined,
    binning: BinningChoice,
    signal?: AbortSignal,
  ): Promise<ApiResult<'metrics.compare'>> {
    return this.metrics.compare(this.recordingCopy(signal), a, b, lastFrames, binning);
  }

  /**
   * Calibrators fitted on the recording's fused output at the current gate settings, compared
   * held-out; each method's fit is reported as it starts ('fitting calibrators: NAME').
   */
  compareCalibrators(
    request: ApiParsedParams<'calibrator.compare'>,
    call: CallContext,
  ): Promise<ApiResult<'calibrator.compare'>> {
    return this.metrics.compareCalibrators(
      this.recordingCopy(call.signal),
      this.session.knobs.current.gate,
      request,
      (done, total, stage) => call.progress(`fitting calibrators: ${stage}`, done, total),
    );
  }

  /** Split-conformal prediction sets of the recording's output at the current knobs and calibrator. */
  conformalSets(request: ApiParsedParams<'conformal.sets'>, call: CallContext): Promise<ApiResult<'conformal.sets'>> {
    return this.metrics.conformalSets(this.recordingCopy(call.signal), this.session.knobs.current.gate, request);
  }

  /** The paper's analyses at the current knobs (and output calibrator), by replay on a thread of their own. */
  async analyse(params: ApiParsedParams<'analysis.run'>, call: CallContext): Promise<ApiResult<'analysis.run'>> {
    const recording = this.session.requireRecording();
    const { trace } = recording.copy();
    const { gate, calibrator, version } = this.session.knobs.current;
    const started = performance.now();
    const request = {
      trace,
      settings: gate,
      calibrator,
      permutations: params.permutations,
      signal: call.signal,
      onProgress: stepsOfCall(call).onProgress,
    };
    const analyses = await analyseTrace(request);
    return {
      recordingId: recording.id,
      settingsVersion: version,
      frames: analyses.frames,
      labelledFrames: analyses.labelledFrames,
      lines: analysisSummaryLines(analyses),
      bySeverity: severityTable(analyses),
      exceptions: exceptionTable(analyses),
      exceptionCount: analyses.teff.exceptionCount,
      wallMs: performance.now() - started,
    };
  }

  /** Tunes the knobs on the current recording by replay (tune-knobs.ts); the knobs stay. */
  async tune(params: ApiParsedParams<'tune.run'>, call: CallContext): Promise<ApiResult<'tune.run'>> {
    const recording = this.session.requireRecording();
    const { gate, calibrator, version } = this.session.knobs.current;
    const trace = recording.copySharing();
    const request = parseTuningRequest({
      metric: params.metric,
      constraints: params.constraints,
      split: tuningSplitOf(params.split),
      within: params.within,
    });
    const task = `tuning on ${trace.frameCount} recorded frames`;
    const onProgress = (done: number, total: number) => call.progress(task, done, total);
    const result = await tuneKnobs({ trace, request, gate, calibrator, signal: call.signal, onProgress });
    return { ...tuningSummary(result), recordingId: recording.id, settingsVersion: version };
  }

  /** The step probe at the current knobs: recorded through the model once, replayed after. */
  stepProbe(params: ApiParsedParams<'probe.step'>, call: CallContext): Promise<ApiResult<'probe.step'>> {
    const model = this.session.requireIdleModel('the step probe');
    const over = this.probeSource(params.over, 'the step probe');
    const { gate, version } = this.session.knobs.current;
    return this.probes.stepAt(params, over, model, gate, version, call);
  }

  /** The frequency probe at the current knobs: recorded through the model once, replayed after. */
  frequencyProbe(params: ApiParsedParams<'probe.frequency'>, call: CallContext): Promise<ApiResult<'probe.frequency'>> {
    const model = this.session.requireIdleModel('the frequency probe');
    const over = this.probeSource(params.over, 'the frequency probe');
    const { gate, version } = this.session.knobs.current;
    return this.probes.frequencyAt(params, over, model, gate, version, call);
  }

  /** What a probe records over: the embedded test set, or the open source when it is a file. */
  private probeSource(over: ProbeSourceKind, what: string): ProbeSource {
    if (over === 'embedded') return { kind: 'embedded' };
    const source = sourceOf(this.session.current);
    if (source === null) throw new KnobError('NOT_AVAILABLE', `${what} over the open source: no source is open`);
    if (source.frames === null)
      throw new KnobError(
        'NOT_AVAILABLE',
        `${what} over the open source: ${source.info.description} is live; a probe needs a file source (its streams are replayed from chosen frames)`,
      );
    return { kind: 'open-source', source: source.frames };
  }

  /** The current recording for the metrics worker (it is sent what the worker lacks), with its basis. */
  private recordingCopy(signal?: AbortSignal) {
    const recording = this.session.requireRecording();
    const { version, calibrator } = this.session.knobs.current;
    return { recording, version, recordingId: recording.id, calibrator, signal };
  }
}
