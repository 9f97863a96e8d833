/**
 * The unlabelled field through the desk's API (issue 30), on a real recording of the shipped model
 * over the embedded stream with shot noise stepping up (knob run): `field.monitor`,
 * `field.timeline`, `field.estimate` and `field.review` give the figures `knob monitor`,
 * `knob timeline`, `knob estimate` and `knob review` print for the same trace and knobs (one use
 * case below both); they refuse without a recording and refuse malformed params by field; and a
 * label given to a queued frame through the label layer reaches the next queue at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { UNKNOWN_LABEL } from '../../src-shared/trace/trace';
import { fashionMnistSample } from '../support/fashion-mnist';
import { knob, steppedCorruptionRun } from '../support/knob-cli';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';

const dir = mkdtempSync(join(tmpdir(), 'knob-field-api-'));
const tracePath = join(dir, 'run', 'trace.arrow');
const backend = new KnobBackend();

/** The CLI's --json answer for the same trace. */
async function cliJson(command: string, trace: string, ...args: string[]): Promise<Record<string, unknown>> {
  const run = await knob(command, trace, '--json', ...args);
  if (run.status !== 0) throw new Error(`knob ${command} failed (${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

const partlyPath = join(dir, 'partly.arrow');
const unlabelledPath = join(dir, 'unlabelled.arrow');
const otherModelPath = join(dir, 'other.onnx');
const otherModelTracePath = join(dir, 'other', 'trace.arrow');
let truth: Int32Array;

beforeAll(async () => {
  await steppedCorruptionRun(join(dir, 'run'), 'shot_noise', 3000, '0:0,1000:2,2000:4');
  // the same recording as the field has it: labelled at first, then one frame in ten
  const { trace } = await readTraceFile(tracePath);
  truth = Int32Array.from(trace.labels!);
  const labels = Int32Array.from(truth, (label, i) => (i < 1000 || i % 10 === 0 ? label : UNKNOWN_LABEL));
  writeFileSync(partlyPath, encodeTraceFile({ ...trace, labels }, null));
  writeFileSync(unlabelledPath, encodeTraceFile({ ...trace, labels: null }, null));
  // a trace of another model: a linear classifier of class means
  const sample = fashionMnistSample(1000);
  writeFileSync(otherModelPath, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
  const other = await knob(
    'run',
    '--model',
    otherModelPath,
    '--source',
    'default',
    '--limit',
    '300',
    '--out',
    join(dir, 'other'),
  );
  if (other.status !== 0) throw new Error(`knob run failed (${other.status}):\n${other.stderr}`);
}, 120_000);
afterAll(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the Field tab through the API', () => {
  it('refuses without a recording, and refuses a reference that ends before it starts, by field', async () => {
    await expect(backend.handle('field.monitor', {})).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/no recording yet/),
    });
    await expect(backend.handle('field.review', {})).rejects.toMatchObject({ code: 'NOT_AVAILABLE' });
    // a repeated signal would be tested twice, each at half the false-alarm budget
    await expect(backend.handle('field.monitor', { signals: ['confidence', 'confidence'] })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/each signal at most once/),
    });
    await expect(backend.handle('field.monitor', { reference: { start: 500, end: 100 } })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/reference\.end/),
    });
  });

  it('gives the command line figures for the same trace at the same knobs', async () => {
    await backend.handle('model.load', { path: 'default', executionProviders: ['cpu'] });
    const loaded = await backend.handle('trace.load', { path: tracePath });
    expect(loaded.frameCount).toBe(3000);

    const monitor = await backend.handle('field.monitor', {});
    const cliMonitor = (await cliJson('monitor', tracePath)) as {
      alarms: Array<{ frame: number; signal: string; detector: string }>;
      pairs: Array<{ calibration?: { threshold: number } }>;
    };
    expect(monitor.alarmCount).toBe(cliMonitor.alarms.length);
    expect(monitor.alarmCount).toBeGreaterThan(0);
    expect(monitor.alarms.map((a) => [a.frame, a.signal, a.detector])).toEqual(
      cliMonitor.alarms.slice(0, monitor.alarms.length).map((a) => [a.frame, a.signal, a.detector]),
    );
    expect(monitor.pairs.map((p) => p.threshold)).toEqual(
      cliMonitor.pairs.map((p) => p.calibration?.threshold ?? null),
    );
    // nothing alarms on the clean frames after the reference (the shift starts at frame 1000)
    expect(monitor.alarms[0]!.frame).toBeGreaterThanOrEqual(1000);

    const timeline = await backend.handle('field.timeline', { windowFrames: 300 });
    const cliTimeline = (await cliJson('timeline', tracePath, '--window-frames', '300')) as {
      windows: Array<{ firstFrame: number; values: Array<{ value: number } | null> }>;
      changePoints: Array<{ frame: number }>;
    };
    expect(timeline.windows.map((w) => w.firstFrame)).toEqual(cliTimeline.windows.map((w) => w.firstFrame));
    expect(timeline.windows.map((w) => w.values[0]?.value)).toEqual(cliTimeline.windows.map((w) => w.values[0]?.value));
    expect(timeline.changePoints.map((c) => c.frame)).toEqual(cliTimeline.changePoints.map((c) => c.frame));
    expect(timeline.changePoints.length).toBeGreaterThan(0);

    const estimate = await backend.handle('field.estimate', { by: 'severity' });
    const cliEstimate = (await cliJson('estimate', tracePath, '--by', 'severity')) as {
      groups: Array<{ key: string; estimates: Array<{ value: number; low: number; high: number }> }>;
    };
    expect(estimate.groups.map((g) => g.key)).toEqual(cliEstimate.groups.map((g) => g.key));
    expect(estimate.groups.map((g) => g.estimates)).toEqual(
      cliEstimate.groups.map((g) => g.estimates.map(({ value, low, high }) => ({ value, low, high }))),
    );
    expect(estimate.methods.map((m) => m.method)).toEqual(['mean confidence', 'atc', 'doc', 'calibrated confidence']);
    for (const group of estimate.groups)
      for (const e of group.estimates) expect(e.low! <= e.value! && e.value! <= e.high!).toBe(true);

    const review = await backend.handle('field.review', { count: 5 });
    const cliReview = (await cliJson('review', tracePath, '--count', '5')) as { queue: Array<{ frame: number }> };
    expect(review.queue.map((q) => q.frame)).toEqual(cliReview.queue.map((q) => q.frame));
  }, 180_000);

  it('a label given to a queued frame reaches the next queue at once', async () => {
    await backend.handle('trace.load', { path: partlyPath, discard: true });
    const window = { start: 2000, end: 3000 };
    const before = await backend.handle('field.review', { count: 5, window });
    expect(before.labelledFrames).toBe(100);
    const frame = before.queue[0]!.frame;
    expect(frame % 10).not.toBe(0);
    // the operator labels it (the operator's layer, beside the truth the trace lacks)
    await backend.handle('stream.label', { frame, label: truth[frame]! });
    const after = await backend.handle('field.review', { count: 5, window });
    expect(after.labelledFrames).toBe(101);
    expect(after.queue.map((q) => q.frame)).not.toContain(frame);
  }, 60_000);

  it("estimates an unlabelled recording from a labelled trace of the same model, and refuses another model's", async () => {
    await backend.handle('trace.load', { path: unlabelledPath, discard: true });
    const estimate = await backend.handle('field.estimate', { referenceTrace: tracePath, windowFrames: 1000 });
    expect(estimate.referenceTrace).toBe(tracePath);
    expect([estimate.referenceStart, estimate.referenceEnd, estimate.referenceLabelledFrames]).toEqual([0, 3000, 3000]);
    // every frame of the recording is estimated, none of its (absent) labels read
    expect(estimate.groups.map((g) => [g.firstFrame, g.frames, g.trueAccuracy])).toEqual([
      [0, 1000, null],
      [1000, 1000, null],
      [2000, 1000, null],
    ]);
    const cli = (await cliJson(
      'estimate',
      unlabelledPath,
      '--by',
      'window',
      '--window-frames',
      '1000',
      '--reference-trace',
      tracePath,
    )) as {
      groups: Array<{ estimates: Array<{ value: number; low: number; high: number }> }>;
    };
    expect(estimate.groups.map((g) => g.estimates)).toEqual(
      cli.groups.map((g) => g.estimates.map(({ value, low, high }) => ({ value, low, high }))),
    );
    await expect(backend.handle('field.estimate', { referenceTrace: otherModelTracePath })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/^trace\.arrow: recorded with another model \(.*other\.onnx/),
    });
  }, 120_000);
});
