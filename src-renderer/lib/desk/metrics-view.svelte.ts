import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { ErrorSlots } from './error-slots.svelte';
import { LatestWins } from './latest-wins';
import type { SessionMirror } from './session-mirror.svelte';
import { ofRecording, whyStale } from './staleness';
import {
  DEFAULT_BINNING_CHOICE,
  binningChoiceText,
  type BinningChoice,
} from '../../../src-shared/metrics/binning-choice';

/**
 * The Calibration panel's figures: the metrics of the current recording at the knobs now, over the
 * frames and with the breakdown the operator chose. One computation at a time, a request made
 * meanwhile running right after it ('full' asked for by anyone wins over 'light'). The figures say
 * when they are stale (staleness.ts): another recording, breakdown, knobs, frame count or labels.
 */
type Snapshot = ApiResult<'metrics.snapshot'>;
type Detail = 'full' | 'light';

export interface MetricsViewHost {
  api: KnobApi;
  slots: ErrorSlots;
  mirror: SessionMirror;
  settingsVersion(): number;
}

export class MetricsView {
  snapshot = $state.raw<Snapshot | null>(null);
  busy = $state(false);
  /** Which recorded frames (the last N; null: all of them), and how to break the headline values down. */
  window = $state<number | null>(null);
  groupBy = $state<Snapshot['groupBy']>('none');
  /** The bins and norm of the chosen calibration error and of the diagrams (A/B uses them too). */
  binning = $state.raw<BinningChoice>(DEFAULT_BINNING_CHOICE);
  /**
   * Whether the figures read every class even with many classes (classwise metrics, per-class
   * diagrams): a knob turn on a 1,000-class recording leaves them out (MetricsOptions.classes) until
   * the operator asks; the choice stays for the recording.
   */
  everyClass = $state(false);
  /** Counts label steps, so the figures know when the labels they read moved. */
  labelsRevision = $state(0);
  private computedLabelsRevision = $state(0);
  /** How much the figures on screen computed: 'light' ones have no intervals, TCE or smooth band yet. */
  private computedDetail = $state<Detail>('full');

  private readonly snapshots: LatestWins<Detail, { snapshot: Snapshot; labelsRevision: number }>;
  /** The computation in flight: its detail, what it was asked at, and its cancel. */
  private inFlight: {
    detail: Detail;
    settingsVersion: number;
    labelsRevision: number;
    binning: BinningChoice;
    cancel: AbortController;
  } | null = null;

  constructor(private readonly host: MetricsViewHost) {
    this.snapshots = new LatestWins({
      run: async (detail) => {
        // the labels as they are when the call starts are the ones it reads
        const labelsRevision = this.labelsRevision;
        const classes = this.everyClass ? ('all' as const) : ('auto' as const);
        const params = {
          lastFrames: this.window ?? undefined,
          groupBy: this.groupBy,
          detail,
          classes,
          binning: this.binning,
        };
        const cancel = new AbortController();
        this.inFlight = {
          detail,
          settingsVersion: host.settingsVersion(),
          labelsRevision,
          binning: params.binning,
          cancel,
        };
        try {
          return {
            snapshot: await host.api.call('metrics.snapshot', params, { signal: cancel.signal }),
            labelsRevision,
          };
        } finally {
          this.inFlight = null;
        }
      },
      merge: (pending, next) => (pending === 'full' || next === 'full' ? 'full' : 'light'),
      deliver: ({ snapshot, labelsRevision }, detail) => {
        host.slots.report('metrics', null);
        if (!ofRecording(snapshot, host.mirror.recordingId)) return;
        this.snapshot = snapshot;
        this.computedLabelsRevision = labelsRevision;
        this.computedDetail = detail;
      },
      // intervals the operator moved away from (interruptIntervals) are no error
      fail: (error) => {
        if ((error as { code?: unknown } | null)?.code !== 'CANCELLED') host.slots.report('metrics', error);
      },
      // Every computation settles the figures the panel shows: the last one of a burst is still current.
      deliverSuperseded: true,
      onBusy: (busy) => (this.busy = busy),
    });
  }

  /** Why the figures on screen no longer describe what they say (null when they do). */
  get stale(): string | null {
    const m = this.snapshot;
    if (m === null) return null;
    const { recordingId, framesProcessed } = this.host.mirror;
    return whyStale(
      { ...m, binning: binningChoiceText(m.binning.choice), labelsRevision: this.computedLabelsRevision },
      {
        recordingId,
        groupBy: this.groupBy,
        binning: binningChoiceText(this.binning),
        settingsVersion: this.host.settingsVersion(),
        frameCount: this.window === null ? framesProcessed : undefined,
        labelsRevision: this.labelsRevision,
      },
    );
  }

  /**
   * The figures on screen are current but 'light' (a playback refresh, or one that ran as the stream
   * was paused): their intervals, TCE and smooth band are still to come.
   */
  get lacksResampling(): boolean {
    return this.snapshot !== null && this.computedDetail === 'light';
  }

  /** Frames are recorded and no figures are on screen yet. */
  get missing(): boolean {
    return this.snapshot === null && this.host.mirror.framesProcessed > 0;
  }

  /**
   * Stops intervals ('full') still being resampled for knobs or labels that have moved on (the
   * metrics worker stops within one resample): a knob turn on a long recording then gets its
   * figures at once instead of after half a minute of resampling for the previous setting, whose
   * figures are already on screen. Returns whether it stopped one.
   */
  interruptIntervals(): boolean {
    const running = this.inFlight;
    if (running === null || running.detail !== 'full') return false;
    const current =
      running.settingsVersion === this.host.settingsVersion() &&
      running.labelsRevision === this.labelsRevision &&
      running.binning === this.binning;
    if (current) return false;
    running.cancel.abort();
    return true;
  }

  /** 'light' (no resampling) keeps refreshes during playback cheap; the Recompute button asks for 'full'. */
  refresh(detail: Detail = 'full'): Promise<void> {
    return this.snapshots.request(detail);
  }

  /** The operator's choice of frames and breakdown, computed at once. */
  choose(window: number | null, groupBy: Snapshot['groupBy']): Promise<void> {
    this.window = window;
    this.groupBy = groupBy;
    return this.refresh();
  }

  /** The operator's bins and norm, computed at once (intervals still resampled for the old ones stop). */
  chooseBinning(choice: BinningChoice): Promise<void> {
    this.binning = choice;
    this.interruptIntervals();
    return this.refresh();
  }

  /** The figures again with every class (the operator asked for the classwise metrics). */
  computeEveryClass(): Promise<void> {
    this.everyClass = true;
    return this.refresh();
  }

  reset(): void {
    this.snapshot = null;
    this.everyClass = false;
  }
}
