/**
 * Issue 30: a drift watch on the live path, off the main thread. A 1000-class recording with 64
 * features a frame, watched on the confidence, u* and the feature MMD by both detectors:
 * - in the batches a camera's frames make (WATCH_BATCH_MS of frames at 30 fps), the event loop's
 *   busy time a frame (performance's eventLoopUtilization: sending each batch and taking its answer,
 *   the wait for it idle) with the watch on its thread, beside the same detectors stepped in line as
 *   the watch did before (frameSignalsAt and DriftWatch.step);
 * - flat out, the frames a second the watch takes (copied, sent and stepped on its thread).
 * Wall-clock figures are printed, never asserted.
 */
import { performance } from 'node:perf_hooks';
import {
  DriftWatch,
  featureSignalReferences,
  frameSignalScratch,
  frameSignalsAt,
  type FrameSignal,
} from '../../src-shared/drift';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { replay } from '../../src-shared/trace/replay';
import { LiveDriftWatch, WATCH_BATCH_MS } from '../../src-main/core/recording/live-drift-watch';
import { calibratedMonitor } from '../support/calibrated-monitor';
import { syntheticTrace } from '../support/synthetic-trace';
import { row } from './bench-timing';

const CLASSES = 1000;
const WIDTH = 64;
const FRAMES = 12_000;
const REFERENCE = { start: 0, end: 3000 };
const FROM_FRAME = 3000;
/** A camera's frames in one batch: WATCH_BATCH_MS of them at 30 fps. */
const CAMERA_BATCH = Math.max(1, Math.round((WATCH_BATCH_MS / 1000) * 30));
const SIGNALS: FrameSignal[] = ['confidence', 'gate-target', 'feature-mmd'];

/** The event loop's busy µs a frame while `stepFrame` steps every frame from FROM_FRAME, `settle` after each batch. */
async function busyUsPerFrame(
  frames: number,
  stepFrame: (i: number) => void,
  settle: () => Promise<unknown>,
): Promise<number> {
  const before = performance.eventLoopUtilization();
  for (let first = FROM_FRAME; first < FROM_FRAME + frames; first += CAMERA_BATCH) {
    for (let i = first; i < Math.min(first + CAMERA_BATCH, FROM_FRAME + frames); i++) stepFrame(i);
    await settle();
  }
  return (performance.eventLoopUtilization(before).active / frames) * 1000;
}

export async function runLiveWatchBench(): Promise<void> {
  process.stdout.write(
    `\n== drift: a live watch on its thread, ${CLASSES} classes and ${WIDTH} features, confidence, u* and feature MMD ==\n`,
  );
  const noise = seededRandom(5);
  const values = new Float32Array(FRAMES * WIDTH);
  for (let i = 0; i < values.length; i++) values[i] = normalDraw(noise);
  const trace = {
    ...syntheticTrace({ frames: FRAMES, classCount: CLASSES, seed: 8 }),
    features: { width: WIDTH, values },
  };
  const settings = DEFAULT_GATE_SETTINGS;
  const { plan, calibrations } = await calibratedMonitor(trace, settings, SIGNALS, REFERENCE, 1, 1);
  const g = replay(trace, settings).g;
  const terms = { reference: REFERENCE, falseAlarmHours: 1, signals: SIGNALS, settingsVersion: 0, gate: settings };
  const startWatch = () => new LiveDriftWatch(plan, calibrations, terms, FROM_FRAME, trace);

  const frames = FRAMES - FROM_FRAME;
  const inline = DriftWatch.arm(plan, calibrations, SIGNALS);
  const out = new Float64Array(SIGNALS.length);
  const scratch = frameSignalScratch(CLASSES, featureSignalReferences(trace, SIGNALS, REFERENCE));
  const inLineUs: number[] = [];
  const threadedUs: number[] = [];
  // best of three each, taken in turn: the VM's speed moves from minute to minute
  for (let run = 0; run < 3; run++) {
    inLineUs.push(
      await busyUsPerFrame(
        frames,
        (i) => {
          frameSignalsAt(trace, i, i, g[i]!, SIGNALS, out, scratch);
          inline.step(i, out, () => {});
        },
        () => new Promise((resolve) => setImmediate(resolve)),
      ),
    );
    const batched = startWatch();
    await batched.settled();
    threadedUs.push(
      await busyUsPerFrame(
        frames,
        (i) => batched.step(trace, i, g[i]!, settings),
        () => batched.settled(),
      ),
    );
    batched.stop('bench done');
  }
  row(
    `event loop a frame, ${CAMERA_BATCH} frames a batch (${WATCH_BATCH_MS} ms at 30 fps)`,
    `${Math.min(...threadedUs).toFixed(1)} µs with the watch on its thread; stepped in line ${Math.min(...inLineUs).toFixed(1)} µs (best of 3)`,
  );

  const flat = startWatch();
  await flat.settled();
  const started = performance.now();
  for (let i = FROM_FRAME; i < FRAMES; i++) flat.step(trace, i, g[i]!, settings);
  await flat.settled();
  const totalMs = performance.now() - started;
  flat.stop('bench done');
  row(
    'flat out: frames a second the watch steps, sent and stepped',
    `${Math.round(frames / (totalMs / 1000)).toLocaleString('en-US')} (${frames} frames in ${totalMs.toFixed(0)} ms; a camera gives 30)`,
  );
}
