import { KnobError } from '../errors';
import { DriftWatch } from './drift-watch';
import { integratedAutocorrelationTime } from './block-bootstrap';
import { CUSUM_IDENTITY } from './cusum';
import { makeStatistic, meanAndSd, type StatisticSpec } from './detector-statistic';
import {
  DEFAULT_PATH_TARGETS,
  DEFAULT_PATHS,
  thresholdsForMeanFramesBetweenAlarms,
  type ThresholdCalibration,
} from './false-alarm-threshold';
import { windowKsIdentity } from './window-ks';

export const DRIFT_DETECTORS = ['cusum', 'window-ks'] as const;
export type DriftDetector = (typeof DRIFT_DETECTORS)[number];

export interface MonitorSignal {
  name: string;
  /** One value a frame, finite. */
  values: Float64Array;
}

export interface MonitorOptions {
  /** The reference window: frames [start, end) of the stream, taken as unshifted. */
  referenceStart: number;
  referenceEnd: number;
  /** Mean time between false alarms of the whole monitor (every signal and detector together). */
  meanFramesBetweenFalseAlarms: number;
  detectors: readonly DriftDetector[];
  windowFrames: number;
  strideFrames: number;
  bins: number;
  seed: number;
  /** Simulated streams a threshold (false-alarm-threshold.ts); by default as many as the budget allows. */
  paths?: number;
}

export interface DriftAlarm {
  frame: number;
  signal: string;
  detector: DriftDetector;
  statistic: number;
  threshold: number;
}

export interface MonitoredPair {
  signal: string;
  detector: DriftDetector;
  identity: string;
  /** Set when the signal cannot be tested (constant on the reference): why. */
  skipped?: string;
  calibration?: ThresholdCalibration;
  alarms: number;
}

export interface MonitorReport {
  referenceStart: number;
  referenceEnd: number;
  /** Frames after the reference that were monitored. */
  monitoredFrames: number;
  meanFramesBetweenFalseAlarms: number;
  /**
   * Each tested signal's share: the whole monitor's target times the signals tested (a union bound
   * over signals; a signal's detectors are calibrated as one alarm).
   */
  meanFramesBetweenFalseAlarmsPerSignal: number;
  pairs: MonitoredPair[];
  /** Every alarm in frame order. */
  alarms: DriftAlarm[];
}

/** One signal's thresholds to calibrate (calibrateThresholds), one a detector, wherever it runs. */
export interface ThresholdRequest {
  specs: StatisticSpec[];
  /** The monitor's pairs the specs stand for, in their order. */
  pairs: number[];
  reference: Float64Array;
  targetFrames: number;
  paths: number;
  minPathFrames: number;
  seed: number;
}

export function calibrateThresholds(request: ThresholdRequest): ThresholdCalibration[] {
  return thresholdsForMeanFramesBetweenAlarms(
    request.specs.map(
      (spec) => (reference: Float64Array, sortedReference: Float64Array) =>
        makeStatistic(spec, reference, sortedReference),
    ),
    request.reference,
    request.targetFrames,
    { paths: request.paths, minPathFrames: request.minPathFrames, seed: request.seed },
  );
}

/** What a monitor will do: its pairs, and the thresholds it needs (a request a tested signal). */
export interface MonitorPlan {
  options: MonitorOptions;
  pairs: MonitoredPair[];
  signalOfPair: number[];
  /** Each tested pair's statistic and reference (null: not tested). */
  statistics: Array<{ spec: StatisticSpec; reference: Float64Array } | null>;
  requests: ThresholdRequest[];
  meanFramesBetweenFalseAlarmsPerSignal: number;
}

/**
 * Drift alarms on per-frame signals, after a reference window taken as unshifted: each signal
 * through each detector, with thresholds calibrated on the reference (false-alarm-threshold.ts)
 * so that the monitor as a whole raises a false alarm at most once in meanFramesBetweenFalseAlarms
 * on data like the reference: each of the m tested signals is held to m times that (the union of m
 * alarm streams alarms at most at the sum of their rates), its detectors calibrated together as one
 * alarm. Every frame after the reference is monitored; a signal's detectors all restart after an
 * alarm of any of them, and every alarm is reported with its frame.
 * In three steps, so the thresholds (the costly part) can be calibrated on threads: planMonitor,
 * calibrateThresholds for each request, runMonitor; monitorSignals does all three here.
 */
export function monitorSignals(signals: readonly MonitorSignal[], options: MonitorOptions): MonitorReport {
  const plan = planMonitor(signals, options);
  return runMonitor(signals, plan, plan.requests.map(calibrateThresholds));
}

export function planMonitor(signals: readonly MonitorSignal[], options: MonitorOptions): MonitorPlan {
  const frames = signals[0]?.values.length ?? 0;
  const { referenceStart, referenceEnd } = options;
  if (!(Number.isInteger(referenceStart) && Number.isInteger(referenceEnd)))
    throw new KnobError('INVALID_INPUT', `the reference window ${referenceStart}:${referenceEnd} is not in frames`);
  if (referenceStart < 0 || referenceEnd > frames || referenceEnd - referenceStart < MIN_REFERENCE_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `the reference window ${referenceStart}:${referenceEnd} must lie within the ${frames} frames and hold at least ${MIN_REFERENCE_FRAMES}`,
    );
  if (options.detectors.includes('window-ks') && options.windowFrames > referenceEnd - referenceStart)
    throw new KnobError(
      'INVALID_INPUT',
      `a window of ${options.windowFrames} frames is longer than the reference window (${referenceEnd - referenceStart})`,
    );
  const pairs: MonitoredPair[] = [];
  const signalOfPair: number[] = [];
  const specs: Array<{ spec: StatisticSpec; reference: Float64Array } | null> = [];
  signals.forEach((signal, signalIndex) => {
    if (signal.values.length !== frames) throw new RangeError(`signal ${signal.name}: ${signal.values.length} values`);
    const reference = signal.values.subarray(referenceStart, referenceEnd);
    const { mean, sd } = meanAndSd(reference);
    const untestable =
      sd > 0 ? untestableReason(reference) : `constant on the reference (${mean}): nothing to compare a shift with`;
    for (const detector of options.detectors) {
      const identity =
        detector === 'cusum'
          ? CUSUM_IDENTITY
          : windowKsIdentity(options.windowFrames, options.strideFrames, options.bins);
      const pair: MonitoredPair = { signal: signal.name, detector, identity, alarms: 0 };
      pairs.push(pair);
      signalOfPair.push(signalIndex);
      if (untestable !== null) {
        pair.skipped = untestable;
        specs.push(null);
        continue;
      }
      const spec: StatisticSpec =
        detector === 'cusum'
          ? { detector }
          : { detector, windowFrames: options.windowFrames, strideFrames: options.strideFrames, bins: options.bins };
      specs.push({ spec, reference });
    }
  });
  const tested = new Set(specs.flatMap((s, index) => (s === null ? [] : [signalOfPair[index]!]))).size;
  const perSignal = options.meanFramesBetweenFalseAlarms * Math.max(1, tested);
  const paths = options.paths ?? pathsWithinBudget(perSignal);
  const windowedPathFrames = options.detectors.includes('window-ks')
    ? options.windowFrames + 10 * options.strideFrames
    : 0;
  const simulated = paths * Math.max(windowedPathFrames, Math.ceil(DEFAULT_PATH_TARGETS * perSignal)) * tested;
  if (simulated > MAX_SIMULATED_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `one false alarm in ${Math.round(options.meanFramesBetweenFalseAlarms)} frames over ${tested} signal${tested === 1 ? '' : 's'} ` +
        `needs ${simulated.toExponential(2)} simulated frames to calibrate, more than the ${MAX_SIMULATED_FRAMES.toExponential(1)} ` +
        'allowed (about half a minute): ask for a shorter time between false alarms or fewer signals',
    );
  const requests: ThresholdRequest[] = [];
  specs.forEach((s, index) => {
    if (s === null) return;
    const signal = signalOfPair[index]!;
    let request = requests.find((r) => signalOfPair[r.pairs[0]!] === signal);
    if (request === undefined) {
      request = {
        specs: [],
        pairs: [],
        reference: s.reference,
        targetFrames: perSignal,
        paths,
        minPathFrames: 0,
        seed: (options.seed + signal * 0x9e3779b9) >>> 0,
      };
      requests.push(request);
    }
    request.specs.push(s.spec);
    request.pairs.push(index);
    // a windowed test must fill its window and test a few times in every path
    if (s.spec.detector === 'window-ks')
      request.minPathFrames = Math.max(request.minPathFrames, s.spec.windowFrames + 10 * s.spec.strideFrames);
  });
  return {
    options,
    pairs,
    signalOfPair,
    statistics: specs,
    requests,
    meanFramesBetweenFalseAlarmsPerSignal: perSignal,
  };
}

/** The monitor run with its thresholds (calibrations[r][k] for plan.requests[r].specs[k]). */
export function runMonitor(
  signals: readonly MonitorSignal[],
  plan: MonitorPlan,
  calibrations: ReadonlyArray<readonly ThresholdCalibration[]>,
): MonitorReport {
  const frames = signals[0]?.values.length ?? 0;
  const { referenceStart, referenceEnd } = plan.options;
  const watch = DriftWatch.arm(
    plan,
    calibrations,
    signals.map((s) => s.name),
  );
  const alarms: DriftAlarm[] = [];
  const onAlarm = (alarm: DriftAlarm) => alarms.push(alarm);
  const values = new Float64Array(signals.length);
  for (let frame = referenceEnd; frame < frames; frame++) {
    for (let s = 0; s < signals.length; s++) values[s] = signals[s]!.values[frame]!;
    watch.step(frame, values, onAlarm);
  }
  return {
    referenceStart,
    referenceEnd,
    monitoredFrames: frames - referenceEnd,
    meanFramesBetweenFalseAlarms: plan.options.meanFramesBetweenFalseAlarms,
    meanFramesBetweenFalseAlarmsPerSignal: plan.meanFramesBetweenFalseAlarmsPerSignal,
    pairs: watch.pairs,
    alarms,
  };
}

/**
 * The frames a signal's simulation is budgeted, at pathTargets x its target a path (paths stop
 * early, so it draws about 40 % of this: 1.5-2 s of a copula AR and two detectors on this machine):
 * long targets get fewer paths, but never fewer than MIN_PATHS, so past the budget the cost grows
 * with the target until MAX_SIMULATED_FRAMES refuses it. The calibration's relative sampling error
 * is about 1 / sqrt(paths): 30 paths at an hour's target over two signals.
 */
export const SIMULATED_FRAMES_BUDGET = 20_000_000;
export const MIN_PATHS = 16;
/**
 * Frames a monitor's simulation may be budgeted at most (paths x pathTargets x target, a signal's
 * streams counted once however many detectors share them): what ends in about a minute here.
 */
export const MAX_SIMULATED_FRAMES = 1.5e9;

function pathsWithinBudget(targetFrames: number): number {
  const perPath = DEFAULT_PATH_TARGETS * targetFrames;
  return Math.max(MIN_PATHS, Math.min(DEFAULT_PATHS, Math.floor(SIMULATED_FRAMES_BUDGET / perPath)));
}

/**
 * Why a varying signal's reference cannot calibrate thresholds, or null. A reference of fewer than
 * MIN_REFERENCE_TAUS autocorrelation times is a handful of independent frames: its mean and sd are
 * off by enough that a CUSUM alarmed 18 times as often as stated on 100 frames of AR(1) with
 * phi 0.95 (2.5 times on 1,000). A signal of few distinct values has a serial dependence the
 * copula simulation does not reproduce (its normal scores are tied and damp it): a two-valued
 * signal alarmed 3.6 times as often as stated.
 */
function untestableReason(reference: Float64Array): string | null {
  const distinct = distinctValuesUpTo(reference, MIN_DISTINCT_VALUES);
  if (distinct < MIN_DISTINCT_VALUES)
    return `takes ${distinct} distinct values on the reference: thresholds for a signal of so few values cannot be calibrated here (the simulation damps its serial dependence)`;
  const tau = integratedAutocorrelationTime(reference);
  if (reference.length < MIN_REFERENCE_TAUS * tau)
    return `the reference spans ${(reference.length / tau).toFixed(1)} autocorrelation times of this signal (tau ${tau.toFixed(1)} frames); its thresholds need ${MIN_REFERENCE_TAUS}: a longer reference`;
  return null;
}

/**
 * How many distinct values `values` takes, counted up to `enough` (a Set of every value of a
 * 20,000-frame reference took 25 ms a signal; a continuous signal has its first 20 in a few frames).
 */
function distinctValuesUpTo(values: Float64Array, enough: number): number {
  const seen = new Set<number>();
  for (let i = 0; i < values.length && seen.size < enough; i++) seen.add(values[i]!);
  return seen.size;
}

export const MIN_DISTINCT_VALUES = 20;
export const MIN_REFERENCE_TAUS = 50;

/** A reference shorter than this says too little about the unshifted stream to calibrate on. */
export const MIN_REFERENCE_FRAMES = 100;
