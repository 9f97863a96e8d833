import { binningIdentity, type BinningSpec, type EqualWidthSpec } from './binning';
import { binningOfChoice, chosenBinningStatistic, type BinningChoice } from './binning-choice';
import { headlineStatistics, type HeadlineStatistic } from './headline-intervals';
import { EQUAL_WIDTH_15, suiteBinnings } from './metric-suite';
import type { ClassScores, TopLabelScores } from './scores';

/**
 * Where the operator's binning (binning-choice.ts) meets the suite's fixed bins in a calibration
 * view: which binnings the suite runs, which figures are resampled, and the per-class diagrams' bins.
 */
/**
 * The suite's fixed binnings (15 equal-width and equal-mass bins), and the operator's choice after
 * them when it is neither: a chosen figure sits beside the fixed ones, which keep their meaning.
 */
export function viewBinnings(sampleCount: number, choice: BinningChoice): BinningSpec[] {
  const fixed = suiteBinnings(sampleCount);
  const chosen = binningOfChoice(choice, sampleCount);
  const known = fixed.some((spec) => binningIdentity(spec) === binningIdentity(chosen));
  return known ? fixed : [...fixed, chosen];
}

/** More bins than this per class would send K x bins diagram bins to the desk (a million at K = 1,000). */
export const MAX_CLASS_DIAGRAM_BINS = 100;

/**
 * The bins of the per-class diagrams (classDiagrams), and where they are among viewBinnings: the
 * chosen ones when equal-width and at most MAX_CLASS_DIAGRAM_BINS, else 15 equal-width (each
 * diagram's identity says which).
 */
export function classDiagramBins(
  binnings: readonly BinningSpec[],
  chosen: BinningSpec,
): { spec: EqualWidthSpec; at: number } {
  const spec = chosen.scheme === 'equal-width' && chosen.bins <= MAX_CLASS_DIAGRAM_BINS ? chosen : EQUAL_WIDTH_15;
  return { spec, at: binnings.findIndex((b) => binningIdentity(b) === binningIdentity(spec)) };
}

/**
 * The figures a view resamples: the headline ones, and the chosen calibration error when it is not
 * already among them (ECE at 15 equal-width bins, the default choice).
 */
export function viewStatistics(scores: ClassScores, top: TopLabelScores, choice: BinningChoice): HeadlineStatistic[] {
  const headline = headlineStatistics(scores, top);
  const chosen = chosenBinningStatistic(top, choice);
  return headline.some((s) => s.identity === chosen.identity) ? headline : [...headline, chosen];
}
