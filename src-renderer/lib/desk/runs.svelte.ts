import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { RecentRuns } from '../../../src-shared/api/recent-runs';
import type { Confirmations } from './confirmations.svelte';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';

/**
 * Recent runs as the backend keeps them (null until listed; 'runs.changed' keeps them current),
 * the last comparison of two, the storage limit, and a run reopened as the current recording.
 */
export interface RunsHost {
  api: KnobApi;
  slots: ErrorSlots;
  confirmations: Confirmations;
  mirror: SessionMirror;
  stopCamera(): void;
}

export class Runs {
  runs = $state.raw<RecentRuns | null>(null);
  comparison = $state.raw<ApiResult<'runs.compare'> | null>(null);

  constructor(private readonly host: RunsHost) {}

  /** The list as the backend has it now; null when it could not be read. */
  async list(): Promise<RecentRuns | null> {
    const runs = await this.host.slots.attempt('runs', () => this.host.api.call('runs.list', {}));
    if (runs) this.runs = runs;
    return runs;
  }

  /** A recent run becomes the recording (the source moves to where it left off, when it is open). */
  async open(id: string): Promise<void> {
    const { api, slots, confirmations, mirror } = this.host;
    this.host.stopCamera();
    const opened = await slots.attempt('runs', () =>
      confirmations.discarding((discard) => api.call('runs.open', { id, discard })),
    );
    if (opened === null) return;
    const state = await slots.attempt('runs', () => api.call('session.get', {}));
    if (state) mirror.adopt(state);
  }

  /** Two recent runs side by side, each at the settings it was recorded with. */
  async compare(a: string, b: string): Promise<void> {
    const result = await this.host.slots.attempt('runs', () => this.host.api.call('runs.compare', { a, b }));
    if (result) this.comparison = result;
  }

  async setLimit(limitBytes: number): Promise<void> {
    const runs = await this.host.slots.attempt('runs', () => this.host.api.call('runs.setLimit', { limitBytes }));
    if (runs) this.runs = runs;
  }
}
