import type { ApiEventData, ApiResult } from '../../src-shared/api/contract';
import type { KnobApi } from '../../src-shared/api/client';
import type { RecordingSummary } from '../../src-shared/api/session-state';
import type { StreamHistory } from './stream-history';

/**
 * What a paused desk replays when the knobs (or the output calibrator) change, so that no view
 * keeps numbers of other knobs without saying so (moved out of desk.svelte.ts):
 * - the charts: the whole recording replayed at the knobs now ('recording.series'), the gate and
 *   the rolling accuracy and confidence the live stream would have shown at them, decimated to
 *   the history's size; for a recording not watched live too (an offline run, a trace, a recent run);
 * - the frame on screen (the scrubbed one, else the last live update): 'trace.frame' at the knobs
 *   now, so an applied calibrator's numbers show at once.
 * One request of each at a time, the latest knobs winning; while the stream plays, the live
 * updates draw the charts and the frame instead. `rollingEmpty` says why the rolling chart is empty.
 */
export type RecordedFrame = ApiResult<'trace.frame'>;
type Update = ApiEventData<'stream.update'>;

export interface ReplayedViewsHost {
  api: KnobApi;
  history: StreamHistory;
  recording(): RecordingSummary | null;
  running(): boolean;
  /** The history was refilled: charts redraw. */
  historyChanged(): void;
  scrubbed(): RecordedFrame | null;
  update(): Update | null;
  showScrubbed(frame: RecordedFrame): void;
  showUpdate(update: Update): void;
  /** A failed replay's error (null: the last one worked), for the stream's error slot. */
  report(error: unknown | null): void;
}

export class ReplayedViews {
  constructor(private readonly host: ReplayedViewsHost) {}

  /** Why the rolling chart is empty (null when it has something to draw). */
  get rollingEmpty(): string | null {
    const recording = this.host.recording();
    if (recording === null || recording.frameCount === 0)
      return 'Nothing recorded yet: play the stream, or open a trace or a recent run.';
    const update = this.host.update();
    const labelled =
      this.host.running() && update !== null ? update.rolling.length > 0 : recording.labelledFrameCount > 0;
    if (!labelled)
      return 'No labelled frames in this recording: the rolling accuracy and confidence need true labels (label frames in labelling mode, or import a label file).';
    return null;
  }

  private seriesLoading = false;
  private seriesAgain = false;

  /** Fills the charts with the recording replayed at the current knobs (a paused desk). */
  async loadSeries(): Promise<void> {
    if (this.seriesLoading) {
      this.seriesAgain = true;
      return;
    }
    this.seriesLoading = true;
    const { api, history } = this.host;
    const series = await this.attempt(() => api.call('recording.series', { maxPoints: history.capacity }));
    this.seriesLoading = false;
    if (series !== null && series.recordingId === this.host.recording()?.id && !this.host.running()) {
      history.clear();
      series.tSeconds.forEach((t, i) =>
        history.push({
          t,
          g: series.g[i],
          u: series.uRef[i],
          severity: series.severity[i],
          rollingAccuracy: series.rollingAccuracy[i] ?? Number.NaN,
          rollingConfidence: series.rollingConfidence[i] ?? Number.NaN,
        }),
      );
      this.host.historyChanged();
    }
    if (this.seriesAgain) {
      this.seriesAgain = false;
      await this.loadSeries();
    }
  }

  private frameLoading = false;
  private frameAgain = false;

  /** The frame on screen again at the current knobs and calibrator (a paused desk). */
  async refreshShownFrame(): Promise<void> {
    if (this.frameLoading) {
      this.frameAgain = true;
      return;
    }
    const scrubbed = this.host.scrubbed();
    const update = this.host.update();
    const frame = scrubbed?.frame ?? update?.frame ?? null;
    if (frame === null || this.host.running()) return;
    this.frameLoading = true;
    const result = await this.attempt(() => this.host.api.call('trace.frame', { frame }));
    this.frameLoading = false;
    if (result !== null && !this.host.running() && result.recordingId === this.host.recording()?.id) {
      // Whichever the panel shows now (a scrub or a play may have moved on meanwhile).
      const nowScrubbed = this.host.scrubbed();
      const nowUpdate = this.host.update();
      if (nowScrubbed !== null && nowScrubbed.frame === frame) this.host.showScrubbed(result);
      else if (nowScrubbed === null && nowUpdate !== null && nowUpdate.frame === frame)
        this.host.showUpdate({ ...nowUpdate, ...result, image: result.image ?? nowUpdate.image });
    }
    if (this.frameAgain) {
      this.frameAgain = false;
      await this.refreshShownFrame();
    }
  }

  private async attempt<T>(work: () => Promise<T>): Promise<T | null> {
    try {
      const result = await work();
      this.host.report(null);
      return result;
    } catch (error) {
      this.host.report(error);
      return null;
    }
  }
}
