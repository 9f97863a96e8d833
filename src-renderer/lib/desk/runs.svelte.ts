import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import {
  MAX_COMPARED_RUNS,
  RunAnnotationSchema,
  type RecentRuns,
  type RunAnnotation,
} from '../../../src-shared/api/recent-runs';
import type { Confirmations } from './confirmations.svelte';
import type { ErrorSlots } from './error-slots.svelte';
import type { SessionMirror } from './session-mirror.svelte';

/**
 * Recent runs as the backend keeps them (null until listed; 'runs.changed' keeps them current),
 * the runs chosen for comparison (the first chosen is the reference) and the last comparison, the
 * operator's names, tags and notes, the storage limit, and a run reopened as the current recording.
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
  /** The runs chosen for the next comparison, in the order chosen (the first is the reference). */
  chosen = $state.raw<string[]>([]);
  /** Comparisons in flight (each run read and replayed: seconds for long runs). */
  private inFlight = $state(0);

  /** A comparison is running (the panel says it is working). */
  get comparing(): boolean {
    return this.inFlight > 0;
  }

  constructor(private readonly host: RunsHost) {}

  /** The list as the backend has it now; null when it could not be read. */
  async list(): Promise<RecentRuns | null> {
    const runs = await this.host.slots.attempt('runs', () => this.host.api.call('runs.list', {}));
    if (runs) this.adopt(runs);
    return runs;
  }

  /** The folder as the backend has it now; a chosen run it no longer holds is no longer chosen. */
  adopt(runs: RecentRuns): void {
    this.runs = runs;
    const held = (id: string) => runs.runs.some((run) => run.id === id);
    if (!this.chosen.every(held)) this.chosen = this.chosen.filter(held);
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

  /** Chooses a run for comparison, or lets it go; at most MAX_COMPARED_RUNS are chosen. */
  toggle(id: string): void {
    if (this.chosen.includes(id)) this.chosen = this.chosen.filter((chosen) => chosen !== id);
    else if (this.chosen.length < MAX_COMPARED_RUNS) this.chosen = [...this.chosen, id];
  }

  /** Two to eight recent runs side by side, each at the settings it was recorded with, against the first. */
  async compare(ids: string[] = this.chosen): Promise<void> {
    this.inFlight++;
    const result = await this.host.slots
      .attempt('runs', () => this.host.api.call('runs.compare', { ids }))
      .finally(() => this.inFlight--);
    if (result) this.comparison = result;
  }

  /**
   * A run's name, tags and notes. Checked here with the API's own schema first, so a tag the
   * backend would refuse is named at once; true when saved.
   */
  async annotate(id: string, annotation: RunAnnotation): Promise<boolean> {
    const checked = RunAnnotationSchema.safeParse(annotation);
    if (!checked.success) {
      this.host.slots.errors.runs = checked.error.issues
        .map((issue) => `${issue.path.join('.') || 'annotation'}: ${issue.message}`)
        .join('; ');
      return false;
    }
    const runs = await this.host.slots.attempt('runs', () =>
      this.host.api.call('runs.annotate', { id, ...checked.data }),
    );
    if (runs) this.adopt(runs);
    return runs !== null;
  }

  async setLimit(limitBytes: number): Promise<void> {
    const runs = await this.host.slots.attempt('runs', () => this.host.api.call('runs.setLimit', { limitBytes }));
    if (runs) this.adopt(runs);
  }
}
