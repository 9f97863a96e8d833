import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiEventData, ApiResult } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import type { Confirmations } from './confirmations.svelte';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';

/**
 * The long call in progress, as the work bar shows it ('work.progress': an offline run, a slow
 * source, a probe's recording, a calibrator comparison), with its start so the bar can say how
 * long is left; the calls the desk starts through `track` (the offline run, the calibrator
 * comparison) are cancelled by the work bar's Cancel. The offline run: the whole source through
 * the model at full speed. A cancelled run keeps what it computed (the session event brings that
 * recording), so cancelling is not an error.
 */
export interface OfflineRunHost {
  api: KnobApi;
  slots: ErrorSlots;
  confirmations: Confirmations;
  mirror: SessionMirror;
}

export class OfflineRun {
  /** The long call in progress; null when none. */
  work = $state.raw<ApiEventData<'work.progress'> | null>(null);
  /** When the work on the bar started (performance.now(), ms). */
  startedAtMs = $state(0);
  result = $state.raw<ApiResult<'stream.runOffline'> | null>(null);
  /** The tracked calls in flight (an export may start while calibrators are fitted); Cancel stops them all. */
  private running: AbortController[] = [];

  constructor(private readonly host: OfflineRunHost) {}

  /** The backend's progress of whatever long call runs. */
  progress(event: ApiEventData<'work.progress'>): void {
    if (this.work === null && !event.finished) this.startedAtMs = performance.now();
    // a call the desk tracks keeps the bar until it returns; its own events only move it
    this.work = event.finished ? (this.running.length === 0 ? null : this.work) : event;
  }

  /**
   * A long call the work bar shows (as `task`, of `total` steps when known) and its Cancel stops:
   * `call` gets the signal that cancels it.
   */
  async track<T>(task: string, total: number | null, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.running = [...this.running, controller];
    this.startedAtMs = performance.now();
    this.work = { requestId: null, task, done: 0, total, finished: false };
    try {
      return await call(controller.signal);
    } finally {
      this.running = this.running.filter((running) => running !== controller);
      if (this.running.length === 0) this.work = null;
    }
  }

  async run(): Promise<void> {
    const { api, slots, confirmations, mirror } = this.host;
    this.result = null;
    try {
      const result = await this.track('offline run', mirror.source?.frameCount ?? null, (signal) =>
        confirmations.discarding((discard) => api.call('stream.runOffline', { discard }, { signal })),
      );
      slots.report('source', result?.error ? result.error.message : null);
      if (result) this.result = result;
    } catch (error) {
      slots.report('source', error instanceof KnobError && error.code === 'CANCELLED' ? null : error);
    }
  }

  cancel(): void {
    for (const running of this.running) running.abort();
  }

  reset(): void {
    this.result = null;
  }
}
