import { KnobError } from '../../../src-shared/errors';

/**
 * Who holds the model outside the session's states: a model being loaded (between its checks and
 * the old model's close) or a probe recording through it. While one holds it, the transitions that
 * run the model (play, an offline run, another load) are refused, and a probe is refused while a
 * model loads; neither queues behind the other, since a probe would otherwise record through a
 * model that is closed under it. Two probes may record at once: they only read the model.
 */
export class ModelLease {
  private loading = false;
  private readonly probes = new Map<string, number>();

  /** Refuses `doing` (a transition that runs or replaces the model) while a probe records. */
  refuseWhileProbing(doing: string): void {
    const [probe] = this.probes.keys();
    if (probe !== undefined)
      throw new KnobError(
        'NOT_AVAILABLE',
        `${probe} is recording through the model: cancel it or wait before ${doing}`,
      );
  }

  /** Marks a model load from its checks to the old model's close; call the result when it ends. */
  beginLoading(): () => void {
    this.loading = true;
    return () => {
      this.loading = false;
    };
  }

  /** A probe's hold on the model for as long as `work` records through it. */
  async forProbe<T>(probe: string, work: () => Promise<T>): Promise<T> {
    if (this.loading) throw new KnobError('NOT_AVAILABLE', `${probe} runs the model: a model is loading; wait for it`);
    this.probes.set(probe, (this.probes.get(probe) ?? 0) + 1);
    try {
      return await work();
    } finally {
      const held = this.probes.get(probe)! - 1;
      if (held === 0) this.probes.delete(probe);
      else this.probes.set(probe, held);
    }
  }

  /** Refuses a probe before it starts while a model loads (the same words as forProbe). */
  refuseWhileLoading(probe: string): void {
    if (this.loading) throw new KnobError('NOT_AVAILABLE', `${probe} runs the model: a model is loading; wait for it`);
  }
}
