import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';
import { ofRecording, whyStale } from './staleness';
import { binningChoiceText, type BinningChoice } from '../../../src-shared/metrics/binning-choice';

/**
 * A/B: two knob settings taken from the knobs, compared by replaying the recorded trace with both.
 * The result is of the slots as they were set when it was computed: it says it is stale when A or
 * B changed since, another recording is current or more frames were recorded.
 */
export interface AbCompareHost {
  api: KnobApi;
  slots: ErrorSlots;
  mirror: SessionMirror;
  gate(): GateSettings;
  /** The Calibration panel's choice of frames (the last N; null: all). */
  window(): number | null;
  /** The Calibration panel's bins and norm. */
  binning(): BinningChoice;
}

export class AbCompare {
  result = $state.raw<ApiResult<'metrics.compare'> | null>(null);
  slots = $state<{ a: GateSettings | null; b: GateSettings | null }>({ a: null, b: null });
  /** Counts slot changes, so a result knows whether it still shows A and B as set. */
  slotsRevision = $state(0);
  /** Comparisons in flight (two replays and their resamples: seconds on a long recording). */
  private inFlight = $state(0);
  private comparedRevision = $state(-1);

  constructor(private readonly host: AbCompareHost) {}

  /** Remembers the current knobs as slot A or B. */
  take(slot: 'a' | 'b'): void {
    this.slots[slot] = { ...this.host.gate() };
    this.slotsRevision++;
  }

  /** A comparison is running (the panel says it is working). */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  get ready(): boolean {
    return this.slots.a !== null && this.slots.b !== null;
  }

  /** Why the result on screen is out of date (null when it is not). */
  get stale(): string | null {
    const c = this.result;
    if (c === null) return null;
    const { recordingId, framesProcessed } = this.host.mirror;
    return whyStale(
      {
        recordingId: c.a.recordingId,
        slotsRevision: this.comparedRevision,
        frameCount: c.a.frameCount,
        binning: binningChoiceText(c.a.binning.choice),
      },
      {
        recordingId,
        binning: binningChoiceText(this.host.binning()),
        slotsRevision: this.slotsRevision,
        frameCount: this.host.window() === null ? framesProcessed : undefined,
      },
    );
  }

  async compare(): Promise<void> {
    const { a, b } = this.slots;
    if (a === null || b === null) {
      this.host.slots.errors.compare = 'set both A and B from the knobs first';
      return;
    }
    const revision = this.slotsRevision;
    this.inFlight++;
    const result = await this.host.slots
      .attempt('compare', () =>
        this.host.api.call('metrics.compare', {
          a,
          b,
          lastFrames: this.host.window() ?? undefined,
          binning: this.host.binning(),
        }),
      )
      .finally(() => this.inFlight--);
    if (result && ofRecording(result.a, this.host.mirror.recordingId)) {
      this.result = result;
      this.comparedRevision = revision;
    }
  }

  reset(): void {
    this.result = null;
  }
}
