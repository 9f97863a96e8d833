import { KnobError } from '../../../src-shared/errors';
import { ofRecording, whyStale } from './staleness';

/**
 * A view the operator asks for, computed from the current recording at the knobs now (analyses, a
 * comparison of calibrators, a tune): its result, busy while it computes, its error reported to
 * the owner. A result that arrives after another recording became current is not shown; one of
 * older knobs, or of other labels, says so (`stale`). Cleared when another recording becomes current. A request the
 * operator cancelled is not a failure: nothing is reported.
 */
export interface RecordingRequestHost {
  recordingId(): number | null;
  settingsVersion(): number;
  /** Counts label steps: a result computed from other labels is stale (absent: labels not read). */
  labelsRevision?(): number;
  /** The call's failure (null: it worked). */
  report(error: unknown): void;
}

export class RecordingRequest<R extends { recordingId: number; settingsVersion: number }> {
  result = $state.raw<R | null>(null);
  busy = $state(false);
  /** The labels' revision the result was computed from. */
  private resultLabels = $state(0);

  constructor(private readonly host: RecordingRequestHost) {}

  /** Why the result on screen no longer describes the recording at the knobs now (null when it does). */
  get stale(): string | null {
    const result = this.result;
    if (result === null) return null;
    return whyStale(
      { ...result, labelsRevision: this.resultLabels },
      {
        recordingId: this.host.recordingId(),
        settingsVersion: this.host.settingsVersion(),
        labelsRevision: this.host.labelsRevision?.(),
      },
    );
  }

  async run(call: () => Promise<R>): Promise<void> {
    this.busy = true;
    // the labels as they are when the call starts are the ones it reads
    const labels = this.host.labelsRevision?.() ?? 0;
    try {
      const result = await call();
      this.host.report(null);
      if (ofRecording(result, this.host.recordingId())) {
        this.result = result;
        this.resultLabels = labels;
      }
    } catch (error) {
      this.host.report(error instanceof KnobError && error.code === 'CANCELLED' ? null : error);
    } finally {
      this.busy = false;
    }
  }

  reset(): void {
    this.result = null;
  }
}
