import type { CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import { compileConditionDetector, fitConditionDetector, type ConditionDetector } from './condition-detector';
import type { RowConditions, RowFeatures } from './fit-input';
import type { FitReport } from './fit-report';
import { fitTemperature } from './temperature-scaling';

/**
 * Condition-aware calibration (issue 30): one temperature per condition (a corruption, a camera, a
 * time-of-day segment), chosen for each frame by the condition its features are detected as
 * (condition-detector.ts), p = softmax(z / T_c(x)). A calibrator fitted on a mixed stream spends one
 * temperature on every condition at once; under a corruption that makes the model overconfident and
 * another that does not, each gets its own here. The detector reads the frame alone; over a stream
 * the applied condition changes once another has been detected on `hysteresisFrames` consecutive
 * frames (condition-hysteresis.ts), the same in the app and in the step graph, which computes both.
 *
 * Fitting: each condition's temperature on the labelled rows recorded under it (fitTemperature),
 * and the detector on the same rows' features. Conditions with fewer than MIN_CONDITION_ROWS rows,
 * and rows whose condition is unknown, are left out of both (the report names them).
 */
export interface ConditionalParams {
  conditions: string[];
  temperatures: number[];
  detector: ConditionDetector;
  hysteresisFrames: number;
}

/**
 * The hysteresis a fit writes unless the request names one: a sixth of a second at 30 fps. A real
 * change of condition gets its temperature 4 frames late; slips of up to 4 frames are ignored. On
 * the mixed stream of tests/e2e/conditional-calibrator.test.ts (README) 5 frames kept the applied
 * condition closest to the recorded one; 20 followed too late and matched it less than frame by frame.
 */
export const DEFAULT_HYSTERESIS_FRAMES = 5;

/** The fewest labelled rows a condition is fitted on. */
export const MIN_CONDITION_ROWS = 30;
/** The most conditions, and the longest name, a spec holds (its schema's bounds). */
export const MAX_CONDITIONS = 64;
export const MAX_CONDITION_NAME = 200;

/** Whether the rows' conditions can be fitted: at least two of them with MIN_CONDITION_ROWS rows each. */
export function conditionsFittable(conditions: RowConditions): boolean {
  const counts = new Map<number, number>();
  for (const code of conditions.codes) if (code >= 0) counts.set(code, (counts.get(code) ?? 0) + 1);
  return [...counts.values()].filter((count) => count >= MIN_CONDITION_ROWS).length >= 2;
}

export function fitConditional(
  logits: LogitArray,
  labels: Int32Array,
  k: number,
  features: RowFeatures,
  conditions: RowConditions,
  signal?: CancelSignal,
): { params: ConditionalParams; report: FitReport } {
  const n = labels.length;
  if (conditions.codes.length !== n)
    throw new KnobError('INVALID_INPUT', `${conditions.codes.length} row conditions for ${n} rows`);
  const rowsOf = conditions.names.map(() => [] as number[]);
  for (let i = 0; i < n; i++) {
    const code = conditions.codes[i];
    if (code >= 0 && code < rowsOf.length) rowsOf[code].push(i);
  }
  const kept = rowsOf
    .map((rows, code) => ({ name: conditions.names[code], rows }))
    .filter((c) => c.rows.length >= MIN_CONDITION_ROWS);
  const counts = rowsOf.map((rows, code) => `${conditions.names[code]} ${rows.length}`).join(', ');
  if (kept.length < 2)
    throw new KnobError(
      'INVALID_INPUT',
      `condition-aware calibration needs at least two conditions with ${MIN_CONDITION_ROWS} labelled frames each; the frames have ${counts || 'no conditions'}`,
    );
  if (kept.length > MAX_CONDITIONS)
    throw new KnobError(
      'INVALID_INPUT',
      `condition-aware calibration takes at most ${MAX_CONDITIONS} conditions; the frames have ${kept.length} with ${MIN_CONDITION_ROWS} frames or more (name columns with fewer values)`,
    );
  const long = kept.find((c) => c.name.length > MAX_CONDITION_NAME);
  if (long !== undefined)
    throw new KnobError(
      'INVALID_INPUT',
      `a condition's name is at most ${MAX_CONDITION_NAME} characters; '${long.name.slice(0, 40)}...' has ${long.name.length}`,
    );
  const width = features.width;
  const rows = kept.flatMap((c) => c.rows).sort((a, b) => a - b);
  const codeOfRow = new Int32Array(n).fill(-1);
  kept.forEach((c, code) => c.rows.forEach((row) => (codeOfRow[row] = code)));
  const detectorFeatures = new Float32Array(rows.length * width);
  const detectorCodes = new Int32Array(rows.length);
  rows.forEach((row, i) => {
    detectorFeatures.set(features.values.subarray(row * width, (row + 1) * width), i * width);
    detectorCodes[i] = codeOfRow[row];
  });
  const detector = fitConditionDetector(detectorFeatures, width, detectorCodes, kept.length, signal);
  let nll = 0;
  let converged = detector.converged;
  const temperatures = kept.map(({ rows: own }) => {
    const z = new Float64Array(own.length * k);
    const y = new Int32Array(own.length);
    own.forEach((row, i) => {
      for (let c = 0; c < k; c++) z[i * k + c] = logits[row * k + c];
      y[i] = labels[row];
    });
    const fit = fitTemperature(z, y, k);
    nll += fit.report.objective * own.length;
    converged &&= fit.report.converged;
    return fit.params.temperature;
  });
  // What is deployed applies the detected condition's temperature: its NLL on the fitting frames
  // is the objective reported, beside the NLL under the recorded conditions.
  const compiled = compileConditionDetector(detector.detector);
  let detected = 0;
  let deployedNll = 0;
  const scaled = new Float64Array(k);
  rows.forEach((row) => {
    const condition = compiled.conditionOf(features.values, row * width);
    if (condition === codeOfRow[row]) detected++;
    for (let c = 0; c < k; c++) scaled[c] = logits[row * k + c] / temperatures[condition]!;
    deployedNll += logSumExpRow(scaled, 0, k) - scaled[labels[row]];
  });
  const hysteresisFrames = conditions.hysteresisFrames ?? DEFAULT_HYSTERESIS_FRAMES;
  const left = rowsOf
    .map((r, code) => ({ name: conditions.names[code], count: r.length }))
    .filter((c) => c.count > 0 && c.count < MIN_CONDITION_ROWS);
  return {
    params: {
      conditions: kept.map((c) => c.name),
      temperatures,
      detector: detector.detector,
      hysteresisFrames,
    },
    report: {
      method:
        `temperature scaling per condition (${kept.map((c) => `${c.name}: ${c.rows.length} frames`).join(', ')}` +
        `${left.length > 0 ? `; left out, under ${MIN_CONDITION_ROWS} frames: ${left.map((c) => `${c.name} ${c.count}`).join(', ')}` : ''}); ` +
        `condition detector: multinomial logistic regression on the features, ${((100 * detected) / rows.length).toFixed(1)} % of the fitting frames detected as their own condition; ` +
        `over a stream another condition applies once ${hysteresisFrames} frame${hysteresisFrames === 1 ? ' is' : 's in a row are'} detected otherwise (each frame here at its detected condition); ` +
        `NLL ${(nll / rows.length).toFixed(4)} under the recorded conditions`,
      objectiveName: "NLL (each frame at its detected condition's temperature)",
      objective: deployedNll / rows.length,
      iterations: detector.iterations,
      converged,
    },
  };
}

/**
 * The params made ready to apply: a row's detected condition (an index into `conditions`), and the
 * temperature of the condition applied to it (`condition`, where a stream's hysteresis chose it; the
 * detected one otherwise).
 */
export function compileConditional(params: Pick<ConditionalParams, 'temperatures' | 'detector'>): {
  conditionOf(features: Float32Array, offset: number): number;
  temperatureOf(features: Float32Array, offset: number, condition?: number): number;
} {
  const detector = compileConditionDetector(params.detector);
  const temperatures = Float64Array.from(params.temperatures);
  return {
    conditionOf: (features, offset) => detector.conditionOf(features, offset),
    temperatureOf: (features, offset, condition) => temperatures[condition ?? detector.conditionOf(features, offset)],
  };
}
