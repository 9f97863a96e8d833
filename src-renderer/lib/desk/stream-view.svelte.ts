import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiEventData, ApiResult } from '../../../src-shared/api/contract';
import type { ErrorSlots } from './error-slots.svelte';
import type { LabelEdit } from './labelling.svelte';
import { LatestWins } from './latest-wins';
import { ReplayedViews } from './replayed-views.svelte';
import { ofRecording } from './staleness';
import type { SessionMirror } from './session-mirror.svelte';
import { StreamHistory } from './stream-history';
import { MAX_CONDITION_SWITCHES, type ConditionSwitches } from '../../../src-shared/trace/condition-switches';

/**
 * What the desk shows of the stream: the last live update, the recorded frame being scrubbed to
 * (paused), and the charts' history; while paused, the charts and the frame on screen are replayed
 * at new knobs (replayed-views.svelte.ts). Updates of another recording than the current one (late
 * ones after a switch) are dropped.
 */
type Update = ApiEventData<'stream.update'>;
type Rolling = Update['rolling'];

function rollingColumns(rolling: Rolling): { rollingAccuracy: number; rollingConfidence: number } {
  const value = (name: string): number => rolling.find((m) => m.name === name)?.value ?? Number.NaN;
  return { rollingAccuracy: value('accuracy'), rollingConfidence: value('mean confidence') };
}

export interface StreamViewHost {
  api: KnobApi;
  slots: ErrorSlots;
  mirror: SessionMirror;
}

export class StreamView {
  update = $state.raw<Update | null>(null);
  /** The recorded frame on screen while scrubbing (paused); null follows the live stream. */
  scrubbed = $state.raw<ApiResult<'trace.frame'> | null>(null);
  /** Bumped on every change of the history so charts know to redraw (the history itself is not reactive). */
  historyRevision = $state(0);
  readonly history = new StreamHistory(1800);
  /**
   * Where a condition-aware calibrator's condition changes, for the gate chart: live (`seenLive`),
   * the switches seen in the updates (at most 30 a second, so a count of what was seen), the newest
   * MAX_CONDITION_SWITCHES kept; from 'recording.series' (a recording not watched live, or the knobs
   * or calibrator changed while paused), every frame where it switches.
   */
  conditions = $state.raw<(ConditionSwitches & { seenLive: boolean }) | null>(null);
  /** The charts and the frame on screen replayed at new knobs while paused; why the rolling chart is empty. */
  readonly replayed: ReplayedViews;

  /** A rejected frame's error is on screen: the next frame that gets through clears it (its cause is gone). */
  private frameErrorShown = false;
  private readonly scrubs: LatestWins<number, ApiResult<'trace.frame'>>;

  constructor(private readonly host: StreamViewHost) {
    const { api, slots, mirror } = host;
    this.scrubs = new LatestWins({
      run: (frame) => api.call('trace.frame', { frame }),
      deliver: (frame) => {
        slots.report('stream', null);
        if (!mirror.running && ofRecording(frame, mirror.recordingId)) this.scrubbed = frame;
      },
      fail: (error) => slots.report('stream', error),
      // Each frame on its way shows the drag moving; the last one asked for still ends on screen.
      deliverSuperseded: true,
    });
    this.replayed = new ReplayedViews({
      api,
      history: this.history,
      recording: () => mirror.session?.recording ?? null,
      running: () => mirror.running,
      historyChanged: () => this.historyRevision++,
      scrubbed: () => this.scrubbed,
      update: () => this.update,
      showScrubbed: (frame) => (this.scrubbed = frame),
      showUpdate: (update) => (this.update = update),
      showConditions: (conditions) => (this.conditions = conditions && { ...conditions, seenLive: false }),
      report: (error) => slots.report('stream', error),
    });
  }

  /** The frame on screen: the scrubbed one, else the latest live update. */
  get shown(): Update | ApiResult<'trace.frame'> | null {
    return this.scrubbed ?? this.update;
  }

  /** Shows a recorded frame replayed at the current knobs (latest request wins while one is in flight). */
  scrub(frame: number): Promise<void> {
    return this.scrubs.request(frame);
  }

  /** Back to following the live stream (play). */
  stopScrubbing(): void {
    this.scrubbed = null;
  }

  received(update: Update): void {
    const taken = this.host.mirror.amendRecording(update.recordingId, (recording) => ({
      ...recording,
      frameCount: update.framesProcessed,
      framesDropped: update.framesDropped,
      unsaved: true,
    }));
    if (!taken) return;
    this.update = update;
    if (this.frameErrorShown) {
      this.frameErrorShown = false;
      this.host.slots.report('stream', null);
    }
    const { timestampSeconds: t, g, uRef: u, severity } = update;
    this.history.push({ t, g, u, severity, ...rollingColumns(update.rolling) });
    this.historyRevision++;
    this.noteCondition(update);
  }

  /** A live update's condition: a switch when it differs from the last one shown. */
  private noteCondition({ calibratorCondition, frame, timestampSeconds: tSeconds }: Update): void {
    const condition = calibratorCondition ?? null;
    if (condition === (this.conditions?.lastCondition ?? null)) return;
    if (condition === null) {
      this.conditions = null;
      return;
    }
    // live, the newest switches are the ones on the chart's time span; a count that live updates
    // add to is one of switches seen
    const { switches, switchCount } = this.conditions ?? { switches: [], switchCount: 0 };
    this.conditions = {
      switches: [...switches.slice(switches.length >= MAX_CONDITION_SWITCHES ? 1 : 0), { frame, tSeconds, condition }],
      switchCount: switchCount + 1,
      lastCondition: condition,
      seenLive: true,
    };
  }

  /** A frame the backend refused (a camera frame of the wrong size): its error until a frame gets through. */
  rejected(message: string): void {
    this.host.slots.errors.stream = message;
    this.frameErrorShown = true;
  }

  /** A label changed: the counts and the rolling figures with it, at once (paused too). */
  recordingChanged(change: ApiEventData<'recording.changed'>): void {
    if (!this.host.mirror.amendRecording(change.recording.id, () => change.recording)) return;
    if (this.history.amendNewest(rollingColumns(change.rolling))) this.historyRevision++;
  }

  /** A label step: the frame on screen shows the label the metrics now read. */
  showLabel(edit: LabelEdit): void {
    if (this.scrubbed?.frame === edit.frame) this.scrubbed = { ...this.scrubbed, label: edit.label };
    if (this.update?.frame === edit.frame) this.update = { ...this.update, label: edit.label };
  }

  /** Another recording became current: nothing of the old one stays on screen. */
  clear(): void {
    this.update = null;
    this.scrubbed = null;
    this.conditions = null;
    this.history.clear();
    this.historyRevision++;
  }
}
