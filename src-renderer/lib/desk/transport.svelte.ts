import type { KnobApi } from '../../../src-shared/api/client';
import type { SessionState } from '../../../src-shared/api/session-state';
import type { Camera } from './camera.svelte';
import type { Confirmations } from './confirmations.svelte';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';
import { ofRecording } from './staleness';
import type { StreamView } from './stream-view.svelte';

/**
 * The transport: play (the camera too), pause, the speed and looping, seek, rewind, a new
 * recording, the gate's state reset. Every call answers with the session, which the mirror adopts;
 * a call that would discard unsaved work asks first (confirmations.svelte.ts).
 */
export interface TransportHost {
  api: KnobApi;
  slots: ErrorSlots;
  confirmations: Confirmations;
  mirror: SessionMirror;
  stream: StreamView;
  camera: Camera;
}

export class Transport {
  speed = $state(1);
  loop = $state(false);

  constructor(private readonly host: TransportHost) {}

  /** The source frame play resumes from (follows the live stream while it plays). */
  get position(): number {
    const { mirror, stream } = this.host;
    const update = stream.update;
    if (mirror.running && ofRecording(update, mirror.recordingId)) return update!.sourceFrame + 1;
    return mirror.session?.playback.position ?? 0;
  }

  /** The speed and looping the backend has (start-up, a reloaded page). */
  adoptPlayback(session: SessionState): void {
    this.speed = session.playback.speed;
    this.loop = session.playback.loop;
  }

  async play(): Promise<void> {
    const { api, confirmations, mirror, stream, camera } = this.host;
    stream.stopScrubbing();
    const state = await this.session(() =>
      confirmations.discarding((discard) => api.call('stream.start', { speed: this.speed, loop: this.loop, discard })),
    );
    if (state?.state === 'camera' && mirror.model) await camera.start(mirror.model, mirror.source?.frameRateHz ?? 30);
  }

  async pause(): Promise<void> {
    this.host.camera.stop();
    if (!this.host.mirror.running) return;
    await this.session(() => this.host.api.call('stream.stop', {}));
  }

  /** Speed and looping; a new speed applies at once while playing. */
  async setPlayback(change: { speed?: number; loop?: boolean }): Promise<void> {
    if (change.speed !== undefined) this.speed = change.speed;
    if (change.loop !== undefined) this.loop = change.loop;
    await this.session(() => this.host.api.call('stream.playback', change));
  }

  /** Moves the source position; the recording is kept. */
  async seek(frame: number): Promise<void> {
    await this.session(() => this.host.api.call('stream.seek', { frame }));
  }

  async rewind(): Promise<void> {
    await this.session(() => this.host.api.call('stream.rewind', {}));
  }

  /** A new, empty recording (asks first when the current one has unsaved work). */
  async newRecording(): Promise<void> {
    const { api, camera, confirmations } = this.host;
    camera.stop();
    await this.session(() => confirmations.discarding((discard) => api.call('recording.reset', { discard })));
  }

  async resetGate(): Promise<void> {
    await this.host.slots.attempt('stream', () => this.host.api.call('stream.resetGate', {}));
  }

  /** A call answering with the session: adopted; its failure in the stream's slot. */
  private async session(call: () => Promise<SessionState | null>): Promise<SessionState | null> {
    const state = await this.host.slots.attempt('stream', call);
    if (state) this.host.mirror.adopt(state);
    return state;
  }
}
