import type { ApiEventData, ApiResult } from '../../../src-shared/api/contract';
import type { KnobApi } from '../../../src-shared/api/client';
import type { RecordingSummary } from '../../../src-shared/api/session-state';
import type { ConditionSwitches } from '../../../src-shared/trace/condition-switches';
import { LatestWins } from './latest-wins';
import { ofRecording } from './staleness';
import type { StreamHistory } from './stream-history';

/**
 * What a paused desk replays when the knobs (or the output calibrator) change, so that no view
 * keeps numbers of other knobs without saying so:
 * - the charts: the whole recording replayed at the knobs now ('recording.series'), the gate and
 *   the rolling accuracy and confidence the live stream would have shown at them, decimated to
 *   the history's size; for a recording not watched live too (an offline run, a trace, a recent run);
 * - the frame on screen (the scrubbed one, else the last live update): 'trace.frame' at the knobs
 *   now, so an applied calibrator's numbers show at once.
 * One request of each at a time, the latest knobs winning (latest-wins.ts); while the stream plays,
 * the live updates draw the charts and the frame instead. `rollingEmpty` says why the rolling
 * chart is empty.
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
  /** The condition-aware calibrator's switches over the recording (null: no such calibrator). */
  showConditions(conditions: ConditionSwitches | null): void;
  /** A failed replay's error (null: the last one worked), for the stream's error slot. */
  report(error: unknown): void;
}

export class ReplayedViews {
  private readonly series: LatestWins<void, ApiResult<'recording.series'>>;
  private readonly frames: LatestWins<number, RecordedFrame>;

  constructor(private readonly host: ReplayedViewsHost) {
    const report = (error: unknown): void => host.report(error);
    this.series = new LatestWins({
      run: () => host.api.call('recording.series', { maxPoints: host.history.capacity }),
      deliver: (series) => {
        host.report(null);
        if (this.fits(series)) this.fillHistory(series);
      },
      fail: report,
    });
    this.frames = new LatestWins({
      run: (frame) => host.api.call('trace.frame', { frame }),
      deliver: (result, frame) => {
        host.report(null);
        if (this.fits(result)) this.showFrame(result, frame);
      },
      fail: report,
    });
  }

  /** Why the rolling chart is empty (null when it has something to draw). */
  get rollingEmpty(): string | null {
    const recording = this.host.recording();
    if (recording === null || recording.frameCount === 0)
      return 'Nothing recorded yet: play the stream, or open a trace or a recent run.';
    const update = this.host.update();
    const labelled =
      this.host.running() && update !== null ? update.rolling.length > 0 : recording.labelledFrameCount > 0;
    if (recording.keptClasses !== undefined)
      return `A kept-class trace (${recording.keptClasses}): the rolling accuracy and confidence need every class's probabilities; the calibration view gives its figures with how far the full trace's can lie.`;
    if (!labelled)
      return 'No labelled frames in this recording: the rolling accuracy and confidence need true labels (label frames in labelling mode, or import a label file).';
    return null;
  }

  /** Fills the charts with the recording replayed at the current knobs (a paused desk). */
  loadSeries(): Promise<void> {
    return this.series.request();
  }

  /** The frame on screen again at the current knobs and calibrator (a paused desk). */
  refreshShownFrame(): Promise<void> {
    const frame = this.host.scrubbed()?.frame ?? this.host.update()?.frame ?? null;
    if (frame === null || this.host.running()) return Promise.resolve();
    return this.frames.request(frame);
  }

  /** A replay is shown only on the recording it was made of, and only while paused. */
  private fits(result: { recordingId: number }): boolean {
    return !this.host.running() && ofRecording(result, this.host.recording()?.id ?? null);
  }

  private fillHistory(series: ApiResult<'recording.series'>): void {
    const { history } = this.host;
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
    this.host.showConditions(series.calibratorConditions ?? null);
    this.host.historyChanged();
  }

  /** Into whichever the panel shows now (a scrub or a play may have moved on meanwhile). */
  private showFrame(result: RecordedFrame, frame: number): void {
    const scrubbed = this.host.scrubbed();
    const update = this.host.update();
    if (scrubbed !== null && scrubbed.frame === frame) this.host.showScrubbed(result);
    else if (scrubbed === null && update !== null && update.frame === frame)
      this.host.showUpdate({ ...update, ...result, image: result.image ?? update.image });
  }
}
