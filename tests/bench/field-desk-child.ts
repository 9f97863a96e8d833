/**
 * The desk's side of the field-scale benchmark (field-scale.bench.ts), in a process of its own so
 * its peak memory is its own: a trace file loaded as the desk loads one, then the calibration the
 * desk shows, through the real metrics worker: the first view (the recording sent to the worker,
 * its fused-score tables built), a knob change as the paused desk computes it (three, median: the
 * figures, then their intervals), and the same view computing every class (the full-vector path a
 * knob turn took before issue 29). A kept-class trace is viewed as the desk views it. Prints one JSON
 * line.
 * Run with `node --import tsx tests/bench/field-desk-child.ts TRACE [--exact]`.
 */
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import type { Trace } from '../../src-shared/trace/trace';
import { sliceTrace } from '../../src-shared/trace/trace-slice';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { MetricsWorkerClient } from '../../src-main/core/use-cases/metrics-worker-client';
import { peakRssKb } from '../support/peak-memory.mjs';

const [path, ...flags] = process.argv.slice(2);
const started = performance.now();
// a kept-class trace loads as the desk loads it (its views are its estimates with their bounds)
const { trace } = await readTraceFile(path!, undefined, 'kept classes too');
const loadMs = performance.now() - started;
const recording = {
  frameCount: trace.frameCount,
  copyAll: (): Trace => sliceTrace(trace, 0, trace.frameCount, 'share'),
  copyFrom: (from: number) => ({
    rows: sliceTrace(trace, from, trace.frameCount, 'copy'),
    labels: trace.labels?.slice() ?? null,
  }),
};
const client = new MetricsWorkerClient();
let version = 0;
const view = async (zeta: number, classes: 'auto' | 'all', detail: 'light' | 'full') => {
  const at = performance.now();
  const copy = { recording, version: ++version, recordingId: 1, calibrator: null };
  const settings = { ...DEFAULT_GATE_SETTINGS, zeta };
  const snapshot = await client.snapshot(copy, settings, { groupBy: 'none', detail, classes });
  return { ms: performance.now() - at, snapshot };
};
const first = await view(0.7, 'auto', 'light');
const figures: number[] = [];
const intervals: number[] = [];
for (const zeta of [0.5, 0.9, 1.2]) {
  figures.push((await view(zeta, 'auto', 'light')).ms);
  intervals.push((await view(zeta, 'auto', 'full')).ms);
}
const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
// the high-water mark before every class is computed: what a knob turn needs, apart from that choice
const peakBeforeEveryClassMb = peakRssKb() / 1024;
const exact = flags.includes('--exact') ? await view(0.6, 'all', 'full') : null;
await client.close();
const ece = first.snapshot.values.find((v) => v.identity.startsWith('ECE(top-label, 15 equal-width'))?.value ?? null;
process.stdout.write(
  `${JSON.stringify({
    frames: trace.frameCount,
    classes: trace.classCount,
    loadMs,
    firstViewMs: first.ms,
    knobTurnMs: median(figures),
    intervalsMs: median(intervals),
    exactViewMs: exact?.ms ?? null,
    ece,
    peakBeforeEveryClassMb,
    peakRssMb: peakRssKb() / 1024,
  })}\n`,
);
