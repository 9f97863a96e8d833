/**
 * Issue 30: drift alarms and label-free estimates over a 1-hour recording offline (target under 2 s
 * on this 2-core machine): `knob monitor` and `knob estimate` in processes of their own over an hour
 * at 30 fps of a ten-class stream written by the app's writer, u* moving slowly (a sine with noise)
 * and shifting by 0.15 two thirds in. Prints the wall time (the median of three runs, each listed), the peak memory, how each threshold was
 * calibrated and the first alarm's delay; and the same for the feature-MMD signal on 64 recorded
 * features a frame whose mean moves by 0.3 sd at the same frame.
 * Wall-clock figures are printed, never asserted.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { encodeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { syntheticTrace } from '../support/synthetic-trace';
import { buildInto } from './bench-build';
import { runLiveWatchBench } from './live-watch.bench';
import { row, time } from './bench-timing';
import { autoregressInJavaScript, autoregressInPlace } from '../../src-shared/drift/autoregression-kernel';
import { fitCopulaAutoregression } from '../../src-shared/drift/copula-autoregression';
import { measuredCommandRuns, secondsOfRuns } from './measured-command';

const BUILD_DIR = 'bench-output/drift-build';
const FRAMES = 108_000;
const SHIFT_AT = 72_000;

export async function runDriftBench(): Promise<void> {
  process.stdout.write('\n== drift: knob monitor and knob estimate over an hour at 30 fps (target under 2 s) ==\n');
  buildInto(BUILD_DIR);
  const folder = resolve('bench-output/drift');
  mkdirSync(folder, { recursive: true });
  const noise = seededRandom(41);
  const trace = syntheticTrace({
    frames: FRAMES,
    seed: 37,
    uRef: (i) => 0.55 + 0.1 * Math.sin(i / 300) + 0.05 * normalDraw(noise) + (i >= SHIFT_AT ? 0.15 : 0),
  });
  const path = join(folder, 'hour.arrow');
  writeFileSync(path, encodeTraceFile(trace, null));
  const width = 64;
  const values = new Float32Array(FRAMES * width);
  for (let i = 0; i < values.length; i++) values[i] = normalDraw(noise) + (Math.floor(i / width) >= SHIFT_AT ? 0.3 : 0);
  const withFeatures = join(folder, 'hour-features.arrow');
  writeFileSync(withFeatures, encodeTraceFile({ ...trace, features: { width, values } }, null));
  const monitored = measuredCommandRuns(BUILD_DIR, [
    'tests/support/measured-cli.mjs',
    'monitor',
    path,
    '--reference',
    '0:20000',
    '--json',
  ]);
  const report = JSON.parse(monitored.stdout) as {
    alarms: Array<{ frame: number; signal: string; detector: string }>;
    pairs: Array<{
      signal: string;
      detector: string;
      calibration?: { paths: number; pathFrames: number; simulatedFrames: number };
    }>;
  };
  row(
    'knob monitor, 1 h x 10 classes, confidence and u*, CUSUM and windowed KS',
    `${secondsOfRuns(monitored)}, peak ${monitored.peakMb.toFixed(0)} MB (target under 2 s)`,
  );
  for (const p of report.pairs)
    row(
      `  ${p.signal} / ${p.detector}`,
      p.calibration === undefined
        ? 'not tested'
        : `threshold from ${p.calibration.paths} simulated streams of up to ${p.calibration.pathFrames} frames ` +
            `(${(p.calibration.simulatedFrames / 1e6).toFixed(1)} million frames drawn for the signal)`,
    );
  const beforeShift = report.alarms.filter((a) => a.frame < SHIFT_AT).length;
  const first = report.alarms.find((a) => a.frame >= SHIFT_AT);
  row('alarms before the shift (false alarms, 52,000 frames)', String(beforeShift));
  row(
    'first alarm after the shift',
    first === undefined ? 'none' : `${first.frame - SHIFT_AT} frames (${first.signal}, ${first.detector})`,
  );
  const mmd = measuredCommandRuns(BUILD_DIR, [
    'tests/support/measured-cli.mjs',
    'monitor',
    withFeatures,
    '--reference',
    '0:20000',
    '--signals',
    'feature-mmd',
    '--json',
  ]);
  const mmdAlarms = (JSON.parse(mmd.stdout) as { alarms: Array<{ frame: number }> }).alarms;
  const mmdFirst = mmdAlarms.find((a) => a.frame >= SHIFT_AT);
  const falseAlarms = mmdAlarms.filter((a) => a.frame < SHIFT_AT).length;
  row(
    'knob monitor, the same hour with 64 features, feature-mmd, CUSUM and windowed KS',
    `${secondsOfRuns(mmd)}, peak ${mmd.peakMb.toFixed(0)} MB; ${falseAlarms} alarm${falseAlarms === 1 ? '' : 's'} before the shift ` +
      `(52,000 frames, about half the hour the monitor's one false alarm is spread over), ` +
      `the first after it ${mmdFirst === undefined ? 'none' : `${mmdFirst.frame - SHIFT_AT} frames in`}`,
  );
  const estimated = measuredCommandRuns(BUILD_DIR, [
    'tests/support/measured-cli.mjs',
    'estimate',
    path,
    '--reference',
    '0:20000',
    '--by',
    'window',
    '--json',
  ]);
  const windows = (JSON.parse(estimated.stdout) as { groups: unknown[] }).groups.length;
  row(
    `knob estimate, the same hour in ${windows} one-minute windows, 200 bootstrap replicates`,
    `${secondsOfRuns(estimated)}, peak ${estimated.peakMb.toFixed(0)} MB (target under 2 s)`,
  );
  autoregressionRow(Float64Array.from(trace.uRef.subarray(0, 20_000)));
  await runLiveWatchBench();
}

/**
 * The thresholds' inner loop, the AR sum of the copula stream, in WebAssembly (what runs) against
 * the JavaScript recursion it replaced, on the AR fitted to the hour's u* reference, in this run.
 */
function autoregressionRow(reference: Float64Array): void {
  const { coefficients } = fitCopulaAutoregression(reference);
  const frames = 2048;
  const noise = seededRandom(5);
  const innovations = Float64Array.from({ length: frames }, () => normalDraw(noise));
  const lags = new Float64Array(2 * coefficients.length);
  const block = new Float64Array(frames);
  const blocks = 500;
  const kernel = time(() => {
    for (let b = 0; b < blocks; b++) {
      block.set(innovations);
      autoregressInPlace(coefficients, lags, 0, block, frames);
    }
  });
  const javascript = time(() => {
    for (let b = 0; b < blocks; b++) {
      block.set(innovations);
      autoregressInJavaScript(coefficients, lags, 0, block, frames);
    }
  });
  const nsPerFrame = (ms: number) => (ms * 1e6) / (blocks * frames);
  row(
    `the copula stream's AR(${coefficients.length}) sum, a frame`,
    `${nsPerFrame(kernel.bestMs).toFixed(1)} ns in WebAssembly, ${nsPerFrame(javascript.bestMs).toFixed(1)} ns in JavaScript ` +
      `(${(javascript.bestMs / kernel.bestMs).toFixed(1)} x, best of 7)`,
  );
}
