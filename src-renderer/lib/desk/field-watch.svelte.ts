import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiParams, ApiResult } from '../../../src-shared/api/contract';
import { RecordingRequest, type RecordingRequestHost } from './recording-request.svelte';

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

  constructor(
    private readonly api: KnobApi,
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

  /** Stream times of the listed alarms, for the gate chart's marks (none without a monitor view). */
  get alarmSeconds(): number[] {
    return this.monitor.result?.alarms.map((alarm) => alarm.seconds) ?? [];
  }

  reset(): void {
    this.monitor.reset();
    this.timeline.reset();
    this.estimate.reset();
    this.review.reset();
  }
}
