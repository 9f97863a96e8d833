/**
 * A metric identity without the number of classes predicted, which the MAPIE per-class ECE states
 * and which may differ between a kept-class trace's estimate and its full trace: the same metric.
 */
export const sameMetric = (identity: string): string =>
  identity.replace(/mean over \d+ classes/, 'mean over the classes predicted');
