import { assignBins, type EqualWidthSpec } from './binning';
import { binStatisticsOf, type BinStatistics } from './bin-statistics';

/**
 * Binned statistics of resamples under fixed (equal-width) bins: a value's bin does not depend on
 * the other values, so each value is binned once and a resample only gathers bin ids, scores and
 * outcomes into buffers kept between resamples. The statistics are binStatisticsOf's (exact fixed-
 * point sums), so equal, bin for bin, to binnedStatistics of the resampled values; a bootstrap of a
 * binned error then costs a gather per resample instead of a binning and three allocations.
 * Equal-mass edges move with the resample and cannot be fixed this way.
 */
export interface FixedBinResampler {
  /** The statistics of the values at `indices` (all values, in order, when null). */
  statistics(indices: Uint32Array | null): BinStatistics;
}

/** Where resamples are gathered: one set may serve many resamplers (a class each), used one at a time. */
export interface GatherBuffers {
  current: { bins: Int32Array; scores: Float64Array; outcomes: Uint8Array } | null;
}

export function fixedBinResampler(
  scores: Float64Array,
  outcomes: Uint8Array,
  spec: EqualWidthSpec,
  /** Shared with other resamplers (statistics() is synchronous and keeps nothing in them). */
  gather: GatherBuffers = { current: null },
): FixedBinResampler {
  // binned at the first resample: a view that resamples nothing (a knob turn's light figures) pays nothing
  let bins: { binOf: Int32Array; binCount: number } | null = null;
  return {
    statistics(indices) {
      bins ??= assignBins(scores, spec);
      const { binOf, binCount } = bins;
      if (indices === null) return binStatisticsOf(binOf, binCount, scores, outcomes);
      if (gather.current === null || gather.current.bins.length !== indices.length)
        gather.current = {
          bins: new Int32Array(indices.length),
          scores: new Float64Array(indices.length),
          outcomes: new Uint8Array(indices.length),
        };
      const buffers = gather.current;
      for (let j = 0; j < indices.length; j++) {
        const i = indices[j];
        buffers.bins[j] = binOf[i];
        buffers.scores[j] = scores[i];
        buffers.outcomes[j] = outcomes[i];
      }
      return binStatisticsOf(buffers.bins, binCount, buffers.scores, buffers.outcomes);
    },
  };
}
