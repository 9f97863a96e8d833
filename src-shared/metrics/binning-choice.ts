import { z } from 'zod';
import { binningIdentity, type BinningSpec } from './binning';
import { binnedStatistics } from './column-statistics';
import { topLabelBinnedIdentity } from './binned-metrics';
import {
  expectedCalibrationError,
  lpCalibrationError,
  maximumCalibrationError,
  type BinTotals,
} from './calibration-error';
import { resample } from './bootstrap';
import { fixedBinResampler } from './fixed-bin-resamples';
import type { HeadlineStatistic } from './headline-intervals';
import type { TopLabelScores } from './scores';

/**
 * The operator's binning (issue 32): bin count, equal-width or equal-mass bins, and the norm of
 * the binned calibration error (DEFINITIONS.md 4.1-4.3). It picks the desk's chosen calibration
 * error, its interval, the reliability diagrams and the A/B differences; the suite's fixed 15-bin
 * figures stay beside it so that a figure keeps its meaning whatever is chosen. Edge rules are the
 * CLI's defaults for each scheme (`knob metrics --binning`), so the desk and the CLI name the same
 * figure the same way.
 */
export const BINNING_NORMS = ['L1', 'L2', 'max'] as const;
export type BinningNorm = (typeof BINNING_NORMS)[number];

/** More bins than this leaves most bins empty on any recording the desk holds. */
export const MAX_CHOSEN_BINS = 1000;

export const BinningChoiceSchema = z.strictObject({
  scheme: z.enum(['equal-width', 'equal-mass']),
  bins: z.number().int().min(1).max(MAX_CHOSEN_BINS),
  norm: z.enum(BINNING_NORMS),
});
export type BinningChoice = z.output<typeof BinningChoiceSchema>;

export const DEFAULT_BINNING_CHOICE: BinningChoice = { scheme: 'equal-width', bins: 15, norm: 'L1' };

/**
 * The bins of a choice on `sampleCount` samples: equal-mass bins are capped at the sample count
 * (one sample per bin, as suiteBinnings does), and the identity then states the count used.
 */
export function binningOfChoice(choice: BinningChoice, sampleCount: number): BinningSpec {
  return choice.scheme === 'equal-width'
    ? { scheme: 'equal-width', bins: choice.bins, edgeRule: 'left-closed' }
    : {
        scheme: 'equal-mass',
        bins: Math.max(1, Math.min(choice.bins, sampleCount)),
        massEdges: 'midpoint',
        edgeRule: 'right-closed',
      };
}

/** What each norm is called and computes: the names binnedMetricsFromStatistics gives them. */
const NORM_FIGURES: Record<BinningNorm, { name: string; norm: string; of: (stats: BinTotals) => number }> = {
  // ECE = sum_b (n_b/n) |acc_b - conf_b| (Guo et al. 2017)
  L1: { name: 'ECE', norm: 'L1', of: expectedCalibrationError },
  // RMSCE = (sum_b (n_b/n) (acc_b - conf_b)^2)^(1/2), the plug-in L2 error (Kumar et al. 2019)
  L2: { name: 'RMSCE', norm: 'L2 plug-in', of: (stats) => lpCalibrationError(stats, 2) },
  // MCE = max_b |acc_b - conf_b| over non-empty bins (Naeini et al. 2015)
  max: { name: 'MCE', norm: 'max', of: maximumCalibrationError },
};

/** The chosen figure's name and exact identity, as the metric suite names it under these bins. */
export function chosenFigureIdentity(choice: BinningChoice, spec: BinningSpec): { name: string; identity: string } {
  const figure = NORM_FIGURES[choice.norm];
  return { name: figure.name, identity: topLabelBinnedIdentity(figure.name, binningIdentity(spec), figure.norm) };
}

/** A short label for the desk: "MCE (20 equal-mass bins)". */
export function chosenFigureLabel(choice: BinningChoice, spec: BinningSpec): string {
  return `${NORM_FIGURES[choice.norm].name} (${spec.bins} ${choice.scheme} bins)`;
}

/**
 * The chosen calibration error as a resample statistic (its interval and the A/B differences):
 * each resample re-bins its confidences, so the interval covers the estimator as computed. Every
 * norm is a plug-in estimator biased upward, hence the bias-corrected interval (interval-variants.ts).
 */
export function chosenBinningStatistic(top: TopLabelScores, choice: BinningChoice): HeadlineStatistic {
  const spec = binningOfChoice(choice, top.confidence.length);
  const { identity } = chosenFigureIdentity(choice, spec);
  const figure = NORM_FIGURES[choice.norm];
  const fixed = spec.scheme === 'equal-width' ? fixedBinResampler(top.confidence, top.correct, spec) : null;
  return {
    // the bins in the name too: A/B's table shows names, and 15 equal-width ECE may sit beside it
    name: chosenFigureLabel(choice, spec),
    identity,
    lowerIsBetter: true,
    interval: 'bias-corrected',
    evaluate: (indices) => {
      if (indices === null) return figure.of(binnedStatistics(top.confidence, top.correct, spec));
      // equal-width bins are fixed: a resample counts its draws of each value (the same statistics, exactly)
      if (fixed !== null) return figure.of(fixed.statistics(indices));
      return figure.of(binnedStatistics(resample(top.confidence, indices), resample(top.correct, indices), spec));
    },
  };
}

/** The choice in words ("20 equal-mass bins, max norm"): what the desk says a view was binned with. */
export function binningChoiceText(choice: BinningChoice): string {
  return `${choice.bins} ${choice.scheme} bins, ${choice.norm} norm`;
}
