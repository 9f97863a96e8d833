import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiEventData, ApiResult } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import type { Confirmations } from './confirmations.svelte';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';

/**
 * The long call in progress, as the work bar shows it ('work.progress': an offline run, a slow
 * source, a probe's recording), and the offline run: the whole source through the model at full
 * speed, cancellable from the work bar. A cancelled run keeps what it computed (the session event
 * brings that recording), so cancelling is not an error.
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
  result = $state.raw<ApiResult<'stream.runOffline'> | null>(null);
  private running: AbortController | null = null;

  constructor(private readonly host: OfflineRunHost) {}

  /** The backend's progress of whatever long call runs. */
  progress(event: ApiEventData<'work.progress'>): void {
    this.work = event.finished ? null : event;
  }

  async run(): Promise<void> {
    const { api, slots, confirmations, mirror } = this.host;
    this.result = null;
    const controller = new AbortController();
    this.running = controller;
    this.work = {
      requestId: null,
      task: 'offline run',
      done: 0,
      total: mirror.source?.frameCount ?? null,
      finished: false,
    };
    try {
      const result = await confirmations.discarding((discard) =>
        api.call('stream.runOffline', { discard }, { signal: controller.signal }),
      );
      slots.report('source', result?.error ? result.error.message : null);
      if (result) this.result = result;
    } catch (error) {
      slots.report('source', error instanceof KnobError && error.code === 'CANCELLED' ? null : error);
    } finally {
      this.running = null;
      this.work = null;
    }
  }

  cancel(): void {
    this.running?.abort();
  }

  reset(): void {
    this.result = null;
  }
}
