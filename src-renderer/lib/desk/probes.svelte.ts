import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiParams, ApiResult } from '../../../src-shared/api/contract';
import type { ErrorSlots } from './error-slots.svelte';
import { whyStale } from './staleness';

/**
 * The Probes tab: the step and frequency probes at the knobs they were last computed at, with their
 * parameters. The first call of a probe records it through the model (progress on the work bar,
 * cancellable); later ones with the same parameters replay it, so a knob change re-runs what is
 * shown as a replay. A probe of older knobs is stale (staleness.ts) until replayed.
 */
type ProbeMethod = 'probe.step' | 'probe.frequency';

/** One probe on screen: the last result and the parameters it was asked with. */
export class ShownProbe<M extends ProbeMethod> {
  result = $state.raw<ApiResult<M> | null>(null);
  params = $state.raw<ApiParams<M> | null>(null);

  constructor(readonly method: M) {}

  /** Why it no longer shows the knobs now (null when it does, or when none is shown). */
  staleAt(settingsVersion: number): string | null {
    return this.result === null ? null : whyStale(this.result, { settingsVersion });
  }

  forget(): void {
    [this.result, this.params] = [null, null];
  }
}

export interface ProbesHost {
  api: KnobApi;
  slots: ErrorSlots;
  settingsVersion(): number;
}

export class Probes {
  readonly step = new ShownProbe('probe.step');
  readonly frequency = new ShownProbe('probe.frequency');
  busy = $state(false);
  private running: AbortController | null = null;

  constructor(private readonly host: ProbesHost) {}

  /** A probe shown is of older knobs: `refresh` replays it. */
  get stale(): boolean {
    const version = this.host.settingsVersion();
    return this.step.staleAt(version) !== null || this.frequency.staleAt(version) !== null;
  }

  runStep(params: ApiParams<'probe.step'>): Promise<void> {
    return this.run(this.step, params);
  }

  runFrequency(params: ApiParams<'probe.frequency'>): Promise<void> {
    return this.run(this.frequency, params);
  }

  /** Stops the probe being recorded (the parameters of the last one shown stay). */
  cancel(): void {
    this.running?.abort();
  }

  /** The probes shown again at the knobs now, when they are of older knobs (a replay, no model). */
  async refresh(): Promise<void> {
    if (this.busy) return;
    const version = this.host.settingsVersion();
    for (const shown of [this.step, this.frequency] as const) {
      if (shown.params !== null && shown.staleAt(version) !== null) await this.rerun(shown);
    }
  }

  /**
   * Forgets the probes shown that were recorded through a model or over a source now replaced, so
   * that a knob change replays what is shown instead of recording anew (a model pass nobody asked
   * for). A new model replaces every recording; a new source those over the open source.
   */
  drop(which: 'all' | 'open-source'): void {
    for (const shown of [this.step, this.frequency] as const)
      if (which === 'all' || shown.params?.over === 'open-source') shown.forget();
  }

  private rerun<M extends ProbeMethod>(shown: ShownProbe<M>): Promise<void> {
    return shown.params === null ? Promise.resolve() : this.run(shown, shown.params);
  }

  private async run<M extends ProbeMethod>(shown: ShownProbe<M>, params: ApiParams<M>): Promise<void> {
    this.busy = true;
    const controller = new AbortController();
    this.running = controller;
    const result = await this.host.slots.attempt('probe', () =>
      this.host.api.call(shown.method, params, { signal: controller.signal }),
    );
    this.running = null;
    this.busy = false;
    if (result) [shown.result, shown.params] = [result, params];
  }
}
