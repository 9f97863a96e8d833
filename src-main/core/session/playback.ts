import type { Playback as PlaybackState } from '../../../src-shared/api/session-state';
import { toErrorPayload, type KnobErrorPayload } from '../../../src-shared/errors';
import type { FrameSource } from '../sources/frame-source';

/**
 * Real-time playback of a file source: the clock, the speed, looping and the position.
 * Every frame of the file is delivered (deliver() may wait for the pipeline to take it): at a speed
 * the model cannot keep up with, playback runs as fast as the model allows instead of dropping
 * frames, so a file's recording has every frame and frame numbers and stream time agree.
 *
 * Frames are delivered at their timestamps divided by the speed. A speed change while playing takes
 * effect at once: the clock is re-anchored at the last delivered frame and a wait in progress is cut
 * short. The recording's clock never goes back: after a loop or a seek, the stream time continues
 * one frame period after the last delivered frame (the source's own timestamps shifted by an
 * offset), so a recording that spans several passes or jumps is still one increasing stream.
 */
export const BATCH_FRAMES = 32;
const LATE_MS = 100;

export interface DeliveredFrame {
  pixels: Uint8Array;
  timestampSeconds: number;
  label: number;
  sourceFrame: number;
}

export type PlaybackEnd =
  { reason: 'stopped' } | { reason: 'finished' } | { reason: 'failed'; error: KnobErrorPayload };

export class Playback {
  position = 0;
  speed = 1;
  loop = false;
  private offsetSeconds = 0;
  private lastStreamSeconds: number | null = null;
  private rebase = false;
  private anchor: { wallMs: number; streamSeconds: number } | null = null;
  private wake: (() => void) | null = null;
  private running: { controller: AbortController; done: Promise<PlaybackEnd> } | null = null;

  get playing(): boolean {
    return this.running !== null;
  }

  describe(): PlaybackState {
    return { position: this.position, speed: this.speed, loop: this.loop };
  }

  /** Applied at once while playing (the clock is re-anchored at the last delivered frame). */
  setSpeed(speed: number): void {
    if (speed === this.speed) return;
    this.speed = speed;
    this.anchor = null;
    this.wake?.();
  }

  /** Where the next play resumes; the stream time continues from the last delivered frame. */
  seek(frame: number, frameCount: number | null): void {
    this.position = frameCount === null ? frame : Math.min(frame, Math.max(0, frameCount - 1));
    this.rebase = true;
    this.anchor = null;
    this.wake?.();
  }

  /** A new recording starts: its clock starts at the source's own timestamps again. */
  resetClock(): void {
    this.offsetSeconds = 0;
    this.lastStreamSeconds = null;
    this.rebase = false;
    this.anchor = null;
  }

  /**
   * Plays `source` from the current position, handing each frame to `deliver` at its time. Resolves
   * when stopped, when the source ends (not looping), or when reading fails.
   */
  start(source: FrameSource, deliver: (frame: DeliveredFrame) => Promise<void>): Promise<PlaybackEnd> {
    if (this.running !== null) return this.running.done;
    // Play at the end of a file starts it over (the recording's clock runs on).
    const count = source.info.frameCount;
    if (count !== null && this.position >= count) this.seek(0, count);
    const controller = new AbortController();
    const done = this.run(source, deliver, controller.signal).finally(() => {
      if (this.running?.controller === controller) this.running = null;
    });
    this.running = { controller, done };
    return done;
  }

  /** Stops playing and resolves once no frame will be delivered any more. */
  async stop(): Promise<void> {
    const running = this.running;
    if (running === null) return;
    running.controller.abort();
    this.wake?.();
    await running.done;
  }

  private async run(
    source: FrameSource,
    deliver: (frame: DeliveredFrame) => void,
    signal: AbortSignal,
  ): Promise<PlaybackEnd> {
    const { width, height, channels } = source.info;
    const frameBytes = width * height * channels;
    const periodSeconds = 1 / source.info.frameRateHz;
    this.anchor = null;
    try {
      for (;;) {
        const from = this.position;
        let restarted = false;
        for await (const batch of source.batches(BATCH_FRAMES, from)) {
          for (let i = 0; i < batch.count; i++) {
            if (signal.aborted) return { reason: 'stopped' };
            if (this.position !== batch.first + i) {
              restarted = true; // a seek while playing: read again from the new position
              break;
            }
            const sourceSeconds = batch.timestampsSeconds[i];
            if (
              this.rebase ||
              (this.lastStreamSeconds !== null && sourceSeconds + this.offsetSeconds <= this.lastStreamSeconds)
            ) {
              if (this.lastStreamSeconds !== null)
                this.offsetSeconds = this.lastStreamSeconds + periodSeconds - sourceSeconds;
              this.rebase = false;
            }
            const streamSeconds = sourceSeconds + this.offsetSeconds;
            if (!(await this.waitUntil(streamSeconds, signal))) return { reason: 'stopped' };
            if (this.position !== batch.first + i) {
              restarted = true;
              break;
            }
            await deliver({
              pixels: batch.frames.subarray(i * frameBytes, (i + 1) * frameBytes),
              timestampSeconds: streamSeconds,
              label: batch.labels?.[i] ?? -1,
              sourceFrame: batch.first + i,
            });
            this.lastStreamSeconds = streamSeconds;
            this.position = batch.first + i + 1;
          }
          if (restarted) break;
        }
        if (restarted) continue;
        if (!this.loop || signal.aborted) break;
        this.position = 0;
        this.rebase = true;
      }
      return { reason: 'finished' };
    } catch (error) {
      return { reason: 'failed', error: toErrorPayload(error) };
    }
  }

  /** Waits until stream time `streamSeconds` is due at the current speed; false when stopped. */
  private async waitUntil(streamSeconds: number, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      this.anchor ??= { wallMs: performance.now(), streamSeconds: this.lastStreamSeconds ?? streamSeconds };
      const dueMs = this.anchor.wallMs + ((streamSeconds - this.anchor.streamSeconds) * 1000) / this.speed;
      const waitMs = dueMs - performance.now();
      // Behind by more than LATE_MS (the model is slower than the stream at this speed): the clock is
      // re-anchored here, so playback goes on at the asked pace instead of racing to catch up.
      if (waitMs < -LATE_MS) this.anchor = { wallMs: performance.now(), streamSeconds };
      if (waitMs <= 0) return !signal.aborted;
      const anchor = this.anchor;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, waitMs);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      this.wake = null;
      // Woken early by a speed change or a seek (the anchor was dropped): compute the wait again.
      if (this.anchor === anchor && performance.now() >= dueMs) return !signal.aborted;
    }
  }
}
