import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiEventData, ApiParams, ApiResult } from '../../../src-shared/api/contract';
import type { ErrorSlots } from './error-slots.svelte';
import { RecordingRequest, type RecordingRequestHost } from './recording-request.svelte';

/** Live alarms marked on the gate chart at most (the count says how many there were). */
const MAX_LIVE_MARKS = 2000;

/**
 * The Field tab's views of the current recording at the knobs (issue 30): drift alarms, calibration
 * over time, label-free accuracy estimates and the review queue, each computed by the backend's use
 * case that `knob monitor|timeline|estimate|review` run too. Each is one RecordingRequest: of its
 * recording only, stale when the knobs moved, cleared with the recording.
 */
export class FieldWatch {
  readonly monitor: RecordingRequest<ApiResult<'field.monitor'>>;
  readonly timeline: RecordingRequest<ApiResult<'field.timeline'>>;
  readonly estimate: RecordingRequest<ApiResult<'field.estimate'>>;
  readonly review: RecordingRequest<ApiResult<'field.review'>>;
  /** The live watch as the backend last described it (null: never armed on this recording). */
  watch = $state.raw<ApiResult<'field.watchLive'> | null>(null);
  /** Alarms the live watch raised, as the stream's updates brought them (the last MAX_LIVE_MARKS). */
  liveAlarms = $state.raw<Array<{ frame: number; seconds: number; signal: string; detector: string }>>([]);
  liveAlarmCount = $state(0);

  constructor(
    private readonly api: KnobApi,
    private readonly slots: ErrorSlots,
    host: RecordingRequestHost,
  ) {
    this.monitor = new RecordingRequest(host);
    this.timeline = new RecordingRequest(host);
    this.estimate = new RecordingRequest(host);
    this.review = new RecordingRequest(host);
  }

  runMonitor(params: ApiParams<'field.monitor'>): Promise<void> {
    return this.monitor.run(() => this.api.call('field.monitor', params));
  }

  runTimeline(params: ApiParams<'field.timeline'>): Promise<void> {
    return this.timeline.run(() => this.api.call('field.timeline', params));
  }

  runEstimate(params: ApiParams<'field.estimate'>): Promise<void> {
    return this.estimate.run(() => this.api.call('field.estimate', params));
  }

  runReview(params: ApiParams<'field.review'>): Promise<void> {
    return this.review.run(() => this.api.call('field.review', params));
  }

  /** Arms the last monitor on the frames recorded from now on, or stops it. */
  async watchLive(on: boolean): Promise<void> {
    const view = await this.slots.attempt('field', () => this.api.call('field.watchLive', { on }));
    if (view !== null) this.watch = view;
  }

  /** A stream update: the alarms it carries join the live ones. */
  received(update: ApiEventData<'stream.update'>): void {
    const state = update.driftWatch ?? null;
    const watch = this.watch;
    if (
      state !== null &&
      watch !== null &&
      watch.recordingId === update.recordingId &&
      state.fromFrame === watch.fromFrame
    )
      this.watch = { ...watch, ...state };
    const alarms = update.driftAlarms ?? [];
    if (alarms.length === 0) return;
    this.liveAlarmCount += alarms.length;
    this.liveAlarms = [...this.liveAlarms, ...alarms].slice(-MAX_LIVE_MARKS);
  }

  /** Stream times of the listed and the live alarms, for the gate chart's marks. */
  get alarmSeconds(): number[] {
    const listed = this.monitor.result?.alarms.map((alarm) => alarm.seconds) ?? [];
    return this.liveAlarms.length === 0 ? listed : [...listed, ...this.liveAlarms.map((alarm) => alarm.seconds)];
  }

  reset(): void {
    this.watch = null;
    this.liveAlarms = [];
    this.liveAlarmCount = 0;
    this.monitor.reset();
    this.timeline.reset();
    this.estimate.reset();
    this.review.reset();
  }
}
