import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { RecordingSummary, SessionState, SourceInfo } from '../../../src-shared/api/session-state';
import { KnobError } from '../../../src-shared/errors';
import type { ErrorSlots } from './error-slots.svelte';
import { ofRecording } from './staleness';

/**
 * The session as the backend last described it (state, model, source, playback, recording),
 * replaced whole, never mutated: raw state, no deep proxy (a live update amends it 30 times a
 * second). When another recording becomes current, the owner is told, so that every view computed
 * from the old one is cleared.
 */
export interface SessionMirrorHost {
  slots: ErrorSlots;
  /** Another recording (or none) became current. */
  recordingReplaced(next: SessionState): void;
}

export class SessionMirror {
  session = $state.raw<SessionState | null>(null);

  constructor(private readonly host: SessionMirrorHost) {}

  get model(): ModelDescription | null {
    return this.session?.model ?? null;
  }

  get source(): SourceInfo | null {
    return this.session?.source ?? null;
  }

  get running(): boolean {
    return this.session?.state === 'playing' || this.session?.state === 'camera';
  }

  get recordingId(): number | null {
    return this.session?.recording?.id ?? null;
  }

  get framesProcessed(): number {
    return this.session?.recording?.frameCount ?? 0;
  }

  get framesDropped(): number {
    return this.session?.recording?.framesDropped ?? 0;
  }

  /** The backend's word on the session; its error goes to the stream's slot. */
  adopt(next: SessionState): void {
    const previous = this.recordingId;
    this.session = next;
    this.host.slots.report('stream', next.error === null ? null : KnobError.fromPayload(next.error));
    if ((next.recording?.id ?? null) !== previous) this.host.recordingReplaced(next);
  }

  /**
   * The current recording's summary changed (a live update, a label step): taken only when it is
   * still the current recording. Returns whether it was.
   */
  amendRecording(recordingId: number, change: (recording: RecordingSummary) => RecordingSummary): boolean {
    const session = this.session;
    if (session?.recording == null || !ofRecording({ recordingId }, session.recording.id)) return false;
    this.session = { ...session, recording: change(session.recording) };
    return true;
  }
}
