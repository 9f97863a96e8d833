/**
 * Every number the metrics library returns carries its identity: what exactly was computed
 * (target, binning, edge rule, norm, estimator), so no ECE is ever shown without its variant.
 */
export interface MetricValue {
  /** Short name for tables: 'ECE', 'NLL', 'AUROC'... */
  name: string;
  /** Full variant, e.g. 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)'. */
  identity: string;
  value: number;
  /** Set when the value is an approximation (streaming sketches), saying of what and how close. */
  approximation?: string;
  /**
   * Set when the metric could not be computed on these frames (value NaN): it needs at least
   * `needed` labelled frames and got `got`. The rest of the suite is computed as usual.
   */
  unavailable?: NotEnoughFrames;
}

/** Why a metric has no value: too few labelled frames for its definition (its bins, its test). */
export interface NotEnoughFrames {
  reason: 'not enough frames';
  needed: number;
  got: number;
}

export function metric(name: string, identity: string, value: number, approximation?: string): MetricValue {
  return approximation === undefined ? { name, identity, value } : { name, identity, value, approximation };
}

/** A metric that needs at least `needed` labelled frames, of `got`: no value, and why. */
export function notEnoughFrames(name: string, identity: string, needed: number, got: number): MetricValue {
  return { name, identity, value: Number.NaN, unavailable: { reason: 'not enough frames', needed, got } };
}

/** "not enough frames: needs 15, got 10", for text output. */
export function unavailableText(unavailable: NotEnoughFrames): string {
  return `${unavailable.reason}: needs ${unavailable.needed}, got ${unavailable.got}`;
}
