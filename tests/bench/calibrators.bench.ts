/**
 * Issue 14 benchmark: calibrator fits at the sizes the issue sets (temperature scaling on
 * 1,000,000 x 10, target under 0.5 s; Dirichlet-ODIR on 100,000 x 10, under 5 s), applying a calibrator to a whole trace, and the desk's
 * held-out comparison on a recording-sized set. Prints times; never fails on them.
 */
import {
  CALIBRATION_METHODS,
  COMPARED_BY_DEFAULT,
  calibrateLogits,
  compareCalibrators,
  fitCalibrator,
  needsFeatures,
} from '../../src-shared/calibrators';
import { syntheticClassifier } from '../support/synthetic-classifier';
import { row, time, timeAsync } from './bench-timing';
import { ParallelMetricSuite } from '../../src-main/core/metrics/parallel-metric-suite';
import { compareCalibratorsAlongside } from '../../src-main/core/use-cases/compare-calibrators';

export async function runCalibratorsBench(): Promise<void> {
  process.stdout.write('\nCalibrators, one thread\n');
  const big = syntheticClassifier({ n: 1_000_000, classCount: 10, temperature: 1.5, seed: 1 });
  let temperature = 0;
  const fit = time(
    () => {
      const { spec } = fitCalibrator('temperature', big.logits, big.labels, 10);
      if (spec.method === 'temperature') temperature = spec.temperature;
    },
    3,
    1,
  );
  row(
    'temperature scaling fit, 1,000,000 x 10 (target < 500 ms)',
    `best ${fit.bestMs.toFixed(0)} ms, median ${fit.medianMs.toFixed(0)} ms (T = ${temperature.toFixed(4)}, drawn at 1.5)`,
  );
  const { spec } = fitCalibrator('temperature', big.logits, big.labels, 10);
  const apply = time(() => void calibrateLogits(spec, big.logits, 10), 3, 1);
  row('temperature scaling applied, 1,000,000 x 10', `best ${apply.bestMs.toFixed(0)} ms`);
  const mid = syntheticClassifier({ n: 100_000, classCount: 10, temperature: 1.5, seed: 2 });
  const matrix = time(() => void fitCalibrator('matrix', mid.logits, mid.labels, 10), 1, 0);
  row('matrix scaling fit (L-BFGS), 100,000 x 10', `${matrix.bestMs.toFixed(0)} ms`);
  const dirichlet = time(() => void fitCalibrator('dirichlet', mid.logits, mid.labels, 10), 1, 0);
  row(
    'Dirichlet-ODIR fit with lambda = mu by 3-fold CV, 100,000 x 10 (target < 5,000 ms)',
    `${dirichlet.bestMs.toFixed(0)} ms`,
  );
  const recording = syntheticClassifier({ n: 10_000, classCount: 10, temperature: 1.5, seed: 3 });
  const compare = time(
    () =>
      void compareCalibrators(recording.logits, recording.labels, 10, ['temperature', 'vector', 'platt', 'isotonic'], {
        kind: 'time',
        evaluateFraction: 0.3,
      }),
    1,
    0,
  );
  row('desk comparison: 4 methods, 10,000 frames, time split, 200 resamples', `${compare.bestMs.toFixed(0)} ms`);
  // issue 32: fit-and-compare of every calibrator the desk offers on a recording without features
  const every = CALIBRATION_METHODS.filter((m) => !needsFeatures(m));
  const defaults = COMPARED_BY_DEFAULT.filter((m) => !needsFeatures(m));
  for (const [what, methods] of [
    [`the desk's default ${defaults.length} methods`, defaults],
    [`every method without features (${every.length})`, every],
  ] as const) {
    const all = time(
      () =>
        void compareCalibrators(recording.logits, recording.labels, 10, [...methods], {
          kind: 'time',
          evaluateFraction: 0.3,
        }),
      1,
      0,
    );
    row(`fit and compare ${what}, 10,000 x 10, time split, one thread`, `${all.bestMs.toFixed(0)} ms`);
  }
  // the desk's path: the metrics worker fits a share on the metric suite's helper thread
  const suite = new ParallelMetricSuite();
  const subject = { name: 'bench', ...recording, classCount: 10, features: null, conditions: null };
  const split = { kind: 'time', evaluateFraction: 0.3 } as const;
  const alongside = () =>
    compareCalibratorsAlongside(subject, every, split, {}, (methods) =>
      suite.startCalibrators({ ...subject, methods, split }),
    );
  await alongside(); // the helper thread started and warm
  const twoThreads = await timeAsync(alongside, 1);
  await suite.close();
  row(
    `fit and compare every method without features (${every.length}), 10,000 x 10, two threads (the desk's; target < 5,000 ms)`,
    `${twoThreads.bestMs.toFixed(0)} ms`,
  );
}
