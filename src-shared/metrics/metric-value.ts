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
}

export function metric(name: string, identity: string, value: number, approximation?: string): MetricValue {
  return approximation === undefined ? { name, identity, value } : { name, identity, value, approximation };
}
