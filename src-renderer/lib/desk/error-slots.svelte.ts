import { errorText } from './error-text';

/**
 * One error slot per area of the desk, so a failure is shown next to what caused it; every state
 * module reports into the same slots (a call's success clears its area's slot).
 */
export type Area =
  | 'model'
  | 'makeModel'
  | 'source'
  | 'stream'
  | 'knobs'
  | 'metrics'
  | 'connection'
  | 'compare'
  | 'export'
  | 'runs'
  | 'calibrators'
  | 'conformal'
  | 'probe'
  | 'analysis'
  | 'field';

export class ErrorSlots {
  errors = $state<Record<Area, string | null>>({
    model: null,
    makeModel: null,
    source: null,
    stream: null,
    knobs: null,
    metrics: null,
    connection: null,
    compare: null,
    export: null,
    runs: null,
    calibrators: null,
    conformal: null,
    probe: null,
    analysis: null,
    field: null,
  });

  /** Sets an area's slot from a failure, or clears it (null). */
  report(area: Area, error: unknown): void {
    this.errors[area] = error === null ? null : errorText(error);
  }

  /** Runs a call; its failure goes to the area's slot (resolving to null), its success clears it. */
  async attempt<T>(area: Area, work: () => Promise<T>): Promise<T | null> {
    try {
      const result = await work();
      this.errors[area] = null;
      return result;
    } catch (error) {
      this.errors[area] = errorText(error);
      return null;
    }
  }
}
