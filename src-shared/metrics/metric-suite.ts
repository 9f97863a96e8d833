import { binningIdentity, type BinningSpec, type EqualWidthSpec } from './binning';
import {
  CLASSWISE_METRICS_PER_BINNING,
  classwiseMetrics,
  classwiseMetricsOf,
  classwiseMetricsUnder,
  classwiseNotComputed,
  topLabelBinnedMetrics,
  topLabelPerClassMetrics,
} from './binned-metrics';
import type { BinTotals } from './calibration-error';
import { cumulativeCalibrationTests } from './cumulative-tests';
import { notEnoughFrames, type MetricValue } from './metric-value';
import { mmce } from './mmce';
import { accuracy, multiclassBrier, negativeLogLikelihood, topLabelBrier } from './proper-scores';
import type { ClassScores, TopLabelScores } from './scores';
import { topLabelScores } from './scores';
import { rankOutcomes } from './ranked-outcomes';
import { auroc, selectiveRisk } from './selective';
import { smoothEce } from './smooth-ece';
import { l2CeUStatisticMetric } from './calibration-error-interval';
import {
  TCE_DEFAULT_MIN_BIN_SIZE,
  tceIdentity,
  testBasedCalibrationError,
  tceMetric,
} from './test-based-calibration-error';

/**
 * The full metric set, and named presets that reproduce each public library's default so a number
 * can be compared with the library an operator knows.
 */
export const EQUAL_WIDTH_15: EqualWidthSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };
export const EQUAL_MASS_15: BinningSpec = {
  scheme: 'equal-mass',
  bins: 15,
  massEdges: 'midpoint',
  edgeRule: 'right-closed',
};

/**
 * Up to this many classes every view computes every class; above it a knob turn (the desk) and
 * `knob metrics` compute what costs O(frames) and leave the classwise metrics to an explicit
 * request (issue 29): they read every class's probability on every frame.
 */
export const EVERY_CLASS_MAX_CLASSES = 100;

export interface MetricSuiteOptions {
  /** Binnings for the binned metrics (default: 15 equal-width and 15 equal-mass bins). */
  binnings?: BinningSpec[];
  /** MMCE (exact, O(n log n): a sort): off unless asked for, as netcal's suite leaves it. */
  includeMmce?: boolean;
  /** TCE runs one exact binomial test per distinct prediction (about 5 us each): off unless asked for. */
  includeTce?: boolean;
  seed?: number;
  /**
   * false: the classwise metrics, which read every class's probability of every frame, are marked
   * not computed instead (a knob turn with many classes; the scores may then hold no probabilities).
   */
  everyClass?: boolean;
}

/** The binnings the suite uses for these scores (equal-mass bins capped at the sample count). */
export function suiteBinnings(sampleCount: number, options: MetricSuiteOptions = {}): BinningSpec[] {
  // Fewer samples than equal-mass bins: one sample per bin (as uncertainty-calibration does);
  // the identity then states the bin count actually used.
  return (options.binnings ?? [EQUAL_WIDTH_15, EQUAL_MASS_15]).map((requested) =>
    requested.scheme === 'equal-mass' ? { ...requested, bins: Math.min(requested.bins, sampleCount) } : requested,
  );
}

/**
 * The full suite on one thread. The parallel suite (src-main/core/metrics/parallel-metric-suite.ts)
 * runs the same tasks on two and assembles them the same way: the same values.
 */
export function metricSuite(
  scores: ClassScores,
  options: MetricSuiteOptions = {},
  /** The top-label pairs when the caller has them (scores without probabilities must give them). */
  top: TopLabelScores = topLabelScores(scores),
  /** The classwise statistics under suiteBinnings when the caller made them for its own use too. */
  classwise?: BinTotals[][],
): MetricValue[] {
  const tasks = suiteTasks(scores, top, options, classwise);
  return assembleSuite(scores, options, new Map(tasks.map((t) => [t.key, t.run()])));
}

/**
 * The suite as independent tasks, each a pure function of the scores
 * and their top-label pairs: a thread can take any of them (the parallel suite hands them out from
 * a shared counter), and assembleSuite puts the results in the suite's order. Listed longest
 * first, so the threads finish together.
 */
export interface SuiteTask {
  key: string;
  run(): MetricValue[];
}

export function suiteTasks(
  scores: ClassScores,
  top: TopLabelScores,
  options: MetricSuiteOptions,
  /** classwiseStatisticsUnder(scores, suiteBinnings(...)), when already made. */
  classwise?: BinTotals[][],
): SuiteTask[] {
  const binnings = suiteBinnings(scores.sampleCount, options);
  const tasks: SuiteTask[] = [
    // every class's column under every binning, read together (column-statistics.ts): the longest
    {
      key: 'classwise',
      run: () =>
        options.everyClass === false
          ? classwiseNotComputed(binnings, scores.classCount)
          : classwise === undefined
            ? classwiseMetricsUnder(scores, binnings)
            : classwiseMetricsOf(classwise, binnings),
    },
    {
      key: 'ranked',
      run: () => {
        const ranked = rankOutcomes(top.confidence, top.correct);
        const roc = auroc(top, ranked);
        const tests = cumulativeCalibrationTests(top.confidence, top.correct, 'top-label', ranked);
        return [
          ...(roc === null ? [] : [roc]),
          ...selectiveRisk(top, ranked),
          ...(tests === null ? [] : Object.values(tests).filter((m): m is MetricValue => m !== null)),
        ];
      },
    },
    {
      key: 'head',
      run: () => [accuracy(top), negativeLogLikelihood(scores), multiclassBrier(scores), topLabelBrier(top)],
    },
    ...binnings.flatMap((spec, b) => [
      { key: `per-class:${b}`, run: () => topLabelPerClassMetrics(top, scores.classCount, spec) },
      { key: `binned:${b}`, run: () => topLabelBinnedMetrics(top, spec) },
      {
        key: `u-statistic:${b}`,
        // its asymptotic interval conditions on the bins, so only fixed (equal-width) ones
        run: () => (spec.scheme === 'equal-width' ? [l2CeUStatisticMetric(top.confidence, top.correct, spec)] : []),
      },
    ]),
    { key: 'smooth', run: () => [smoothEce(top.confidence, top.correct).value] },
  ];
  if (options.includeMmce) tasks.unshift({ key: 'mmce', run: () => [mmce(top.confidence, top.correct)] });
  if (options.includeTce) {
    const n = top.confidence.length;
    tasks.unshift({
      key: 'tce',
      run: () => [
        n > TCE_DEFAULT_MIN_BIN_SIZE
          ? tceMetric(testBasedCalibrationError(top.confidence, top.correct))
          : tceNotEnoughFrames(n),
      ],
    });
  }
  return tasks;
}

/** TCE on too few samples: it needs more than its minimum bin size (default settings). */
export function tceNotEnoughFrames(sampleCount: number): MetricValue {
  return notEnoughFrames(
    'TCE',
    tceIdentity(0.05, TCE_DEFAULT_MIN_BIN_SIZE, 1000),
    TCE_DEFAULT_MIN_BIN_SIZE + 1,
    sampleCount,
  );
}

/** The suite in its order from the tasks' results (by key). */
export function assembleSuite(
  scores: ClassScores,
  options: MetricSuiteOptions,
  results: ReadonlyMap<string, MetricValue[]>,
): MetricValue[] {
  const of = (key: string): MetricValue[] => results.get(key) ?? [];
  return [
    ...of('head'),
    ...suiteBinnings(scores.sampleCount, options).flatMap((_, b) => [
      ...of(`binned:${b}`),
      ...of('classwise').slice(b * CLASSWISE_METRICS_PER_BINNING, (b + 1) * CLASSWISE_METRICS_PER_BINNING),
      ...of(`per-class:${b}`),
      ...of(`u-statistic:${b}`),
    ]),
    ...of('smooth'),
    ...of('ranked'),
    ...of('mmce'),
    ...of('tce'),
  ];
}

export const PRESET_NAMES = [
  'torchmetrics-15',
  'netcal-10',
  'kumar-debiased-l2-15',
  'smooth-ece',
  'sklearn-curve-10',
] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * - torchmetrics-15: multiclass calibration error, 15 equal-width bins, 1.0 in an extra bin, L1;
 * - netcal-10: netcal ECE default, 10 equal-width bins, numpy histogram edges ([lo,hi), last closed);
 * - kumar-debiased-l2-15: uncertainty-calibration's default, 15 equal-mass bins, debiased l2
 *   (top-label and marginal);
 * - smooth-ece: relplot's smECE with automatic bandwidth;
 * - sklearn-curve-10: sklearn calibration_curve(n_bins=10) bins ((lo,hi], first closed), as ECE.
 *
 * Two classes: each preset takes the input as its library takes a two-class problem (its
 * identity says which).
 * - 'positive-class': the probability of class 1 against y = 1 (torchmetrics' task='binary',
 *   uncertainty-calibration's 1-D binary input, relplot's smECE(f, y), sklearn's calibration_curve,
 *   which takes nothing else); uncertainty-calibration then computes its one binary error, no
 *   marginal one;
 * - 'top-label': netcal, given the two-column softmax, takes the maximum and the argmax as for any K.
 */
export const PRESET_TWO_CLASS_CONVENTIONS: Record<PresetName, 'positive-class' | 'top-label'> = {
  'torchmetrics-15': 'positive-class',
  'netcal-10': 'top-label',
  'kumar-debiased-l2-15': 'positive-class',
  'smooth-ece': 'positive-class',
  'sklearn-curve-10': 'positive-class',
};

/** The pairs (p_i1, 1[y_i = 1]) of a two-class input, in the top-label pairs' shape. */
function positiveClassPairs(scores: ClassScores): TopLabelScores {
  const n = scores.sampleCount;
  const pairs = { confidence: new Float64Array(n), predicted: new Int32Array(n).fill(1), correct: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    pairs.confidence[i] = scores.probabilities[i * 2 + 1];
    pairs.correct[i] = scores.labels[i] === 1 ? 1 : 0;
  }
  return pairs;
}

export function presetMetrics(
  preset: PresetName,
  scores: ClassScores,
  top: TopLabelScores = topLabelScores(scores),
  /** false: what reads every class (the marginal debiased L2-CE) is marked not computed (MetricSuiteOptions.everyClass). */
  everyClass = true,
  /**
   * Values already computed of the same scores and top-label pairs (the suite's, whose default
   * binnings include 15 equal-mass bins): a preset value of the same identity, the same number by
   * the identity's definition, is taken from them instead of computed again (the marginal debiased
   * L2-CE reads every class of every frame: on 1,080,000 x 10 the presets of three subjects took
   * 1.3 s). Only values computed exactly are taken (no approximation, bound or "not computed"):
   * the identity does not say those.
   */
  computed: readonly MetricValue[] = [],
): MetricValue[] {
  const positiveClass = scores.classCount === 2 && PRESET_TWO_CLASS_CONVENTIONS[preset] === 'positive-class';
  const pairs = positiveClass ? positiveClassPairs(scores) : top;
  const tag = (values: MetricValue[]): MetricValue[] =>
    values.map((v) => ({
      ...v,
      identity: positiveClass
        ? `${v.identity.replace('(top-label,', '(positive class: p(class 1) against y = 1,')} [preset ${preset}, two classes: positive-class convention]`
        : `${v.identity} [preset ${preset}${scores.classCount === 2 ? ', two classes: top-label convention' : ''}]`,
    }));
  switch (preset) {
    case 'torchmetrics-15':
      return tag(
        topLabelBinnedMetrics(pairs, { scheme: 'equal-width', bins: 15, edgeRule: 'one-in-extra-bin' }).filter((m) =>
          ['ECE', 'MCE', 'RMSCE'].includes(m.name),
        ),
      );
    case 'netcal-10':
      return tag(
        topLabelBinnedMetrics(pairs, { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' }).filter((m) =>
          ['ECE', 'MCE', 'ACE (netcal)'].includes(m.name),
        ),
      );
    case 'kumar-debiased-l2-15':
      // the preset is 15 equal-mass bins exactly (the library's default): fewer samples than bins
      // is reported as not enough frames, not binned otherwise
      if (scores.sampleCount < EQUAL_MASS_15.bins) {
        const binning = binningIdentity(EQUAL_MASS_15);
        const short = (name: string, identity: string) =>
          notEnoughFrames(name, identity, EQUAL_MASS_15.bins, scores.sampleCount);
        return tag([
          short('debiased L2-CE', `CE(top-label, ${binning}, L2 debiased, Kumar et al. 2019)`),
          ...(positiveClass
            ? []
            : [short('marginal debiased L2-CE', `CE(marginal, ${binning} per class, L2 debiased, Kumar et al. 2019)`)]),
        ]);
      }
      {
        // the top-label pairs' own values only: the positive-class pairs are another input
        const binning = binningIdentity(EQUAL_MASS_15);
        const known = (identity: string) =>
          positiveClass
            ? undefined
            : computed.find(
                (m) =>
                  m.identity === identity &&
                  m.approximation === undefined &&
                  m.bound === undefined &&
                  m.unavailable === undefined,
              );
        const topLabel = known(`CE(top-label, ${binning}, L2 debiased, Kumar et al. 2019)`);
        const marginal = known(`CE(marginal, ${binning} per class, L2 debiased, Kumar et al. 2019)`);
        return tag([
          ...(topLabel
            ? [topLabel]
            : topLabelBinnedMetrics(pairs, EQUAL_MASS_15).filter((m) => m.name === 'debiased L2-CE')),
          ...(positiveClass
            ? []
            : marginal
              ? [marginal]
              : (everyClass
                  ? classwiseMetrics(scores, EQUAL_MASS_15)
                  : classwiseNotComputed([EQUAL_MASS_15], scores.classCount)
                ).filter((m) => m.name === 'marginal debiased L2-CE')),
        ]);
      }
    case 'smooth-ece':
      return tag([smoothEce(pairs.confidence, pairs.correct).value]);
    case 'sklearn-curve-10':
      return tag(
        topLabelBinnedMetrics(pairs, { scheme: 'equal-width', bins: 10, edgeRule: 'right-closed' }).filter(
          (m) => m.name === 'ECE',
        ),
      );
  }
}
