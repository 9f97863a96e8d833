/**
 * A metric identity without what may differ between a kept-class trace's estimate and its full
 * trace for the same metric: the number of classes predicted, which the MAPIE per-class ECE states,
 * and the bandwidth SmoothECE's search found.
 */
export const sameMetric = (identity: string): string =>
  identity
    .replace(/mean over \d+ classes/, 'mean over the classes predicted')
    .replace(/automatic bandwidth sigma\* = [^,]+,/, 'automatic bandwidth,');
