/**
 * The desk's views of a kept-class trace (issue 29: a day of 1,000 classes is only recorded kept,
 * and the desk is where it is looked at), through the real backend: `trace.load` reads it, the
 * calibration view gives the same figures, each with the same stated bound, as `knob metrics
 * --trace` of the same file, every stated bound holds against the desk's own view of the full trace
 * it was compacted from, a scrubbed frame's readout comes from its kept classes and says what is
 * estimated, and everything that reads every class of every frame (labels, tuning, the analyses,
 * A/B, calibrators, a bundle, every class's metrics) is refused by name, in one set of words,
 * instead of computing on rows the trace does not hold.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import type { Trace } from '../../src-shared/trace/trace';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { metricsSnapshot } from '../../src-main/core/use-cases/metrics-snapshot';
import { plainSource } from '../../src-main/core/use-cases/view-replay';
import { exportBundle } from '../../src-main/core/use-cases/export-bundle';
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { replay } from '../../src-shared/trace/replay';
import { measuredKnob } from '../support/measured-knob';
import { keepRequest } from '../support/recent-run-request';
import { sameMetric } from '../support/same-metric';
import { syntheticTrace } from '../support/synthetic-trace';

interface Figure {
  identity: string;
  value: number | null;
  approximation?: string;
  bound?: number;
  unavailable?: { reason: string };
}

const dir = mkdtempSync(join(tmpdir(), 'knob-kept-desk-'));
const backend = new KnobBackend();
afterAll(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

const full = syntheticTrace({ frames: 3000, classCount: 40, seed: 11 });
const kept: Trace = {
  ...full,
  zStatic: new Float32Array(0),
  zDyn: new Float32Array(0),
  keptClasses: keepLeadingClasses(full, 6),
};
const fullPath = join(dir, 'full.arrow');
const keptPath = join(dir, 'kept.arrow');
writeFileSync(fullPath, encodeTraceFile(full, null));
writeFileSync(keptPath, encodeTraceFile(kept, null));

const NEEDS_EVERY_CLASS =
  /needs every class of every frame, and this recording is a kept-class trace \(6 of 40 classes kept a frame\)/;

describe("the desk's views of a kept-class trace", () => {
  it('loads it, and its calibration view is `knob metrics --trace` of the same file, bounds and all', async () => {
    expect(await backend.handle('trace.load', { path: keptPath, discard: true })).toMatchObject({
      frameCount: 3000,
      classCount: 40,
    });
    const state = await backend.handle('session.get', {});
    expect(state.recording?.keptClasses).toBe('6 of 40 classes kept a frame');
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.kept?.description).toBe('6 of 40 classes kept a frame');
    expect(snapshot.labelledFrameCount).toBe(3000);

    const measured = measuredKnob(['metrics', '--trace', keptPath, '--json']);
    expect(measured.status, measured.stderr).toBe(0);
    const fromCommand = new Map(
      (JSON.parse(measured.stdout) as { metrics: Figure[] }).metrics.map((m) => [m.identity, m] as const),
    );
    expect(snapshot.kept?.unsettledFrames).toBe(
      (JSON.parse(measured.stdout) as { kept: { unsettledFrames: number } }).kept.unsettledFrames,
    );
    let bounded = 0;
    for (const figure of snapshot.values) {
      const command = fromCommand.get(figure.identity);
      expect(command, figure.identity).toBeDefined();
      expect(figure.value, figure.identity).toBe(command!.value);
      expect(figure.approximation, figure.identity).toBe(command!.approximation);
      expect(figure.bound, figure.identity).toBe(command!.bound);
      expect(figure.unavailable?.reason, figure.identity).toBe(command!.unavailable?.reason);
      if (figure.bound !== undefined) bounded++;
    }
    // every metric of the suite is bounded but TCE, and the classwise ones say the classes were not kept
    const available = snapshot.values.filter((m) => m.unavailable === undefined && m.name !== 'TCE');
    expect(bounded).toBe(available.length);
    expect(bounded).toBeGreaterThan(30);
    expect(snapshot.values.find((m) => m.name === 'TCE')?.approximation).toMatch(/no stated bound/);
    expect(snapshot.values.filter((m) => m.unavailable?.reason === 'classes not kept').length).toBeGreaterThan(0);
    for (const interval of snapshot.intervals)
      expect(interval.note).toMatch(/stated bound against the full trace adds/);
  });

  it("every stated bound holds against the desk's view of the full trace", async () => {
    const estimate = await backend.handle('metrics.snapshot', {});
    await backend.handle('trace.load', { path: fullPath, discard: true });
    const truth = await backend
      .handle('metrics.snapshot', {})
      .finally(() => backend.handle('trace.load', { path: keptPath, discard: true }));
    expect(truth.kept).toBeUndefined();
    const truthBySame = new Map(truth.values.map((m) => [sameMetric(m.identity), m] as const));
    let held = 0;
    for (const figure of estimate.values) {
      if (figure.bound === undefined) continue;
      const exact = truthBySame.get(sameMetric(figure.identity));
      expect(exact, figure.identity).toBeDefined();
      expect(Math.abs(exact!.value! - figure.value!), figure.identity).toBeLessThanOrEqual(figure.bound);
      held++;
    }
    expect(held).toBe(estimate.values.filter((m) => m.bound !== undefined).length);
  });

  it('saves it as it was loaded: a kept-class trace again, with the run of the knobs', async () => {
    const saved = join(dir, 'saved.arrow');
    expect(await backend.handle('trace.save', { path: saved })).toMatchObject({ frameCount: 3000, classCount: 40 });
    const back = await readTraceFile(saved, undefined, 'kept classes too');
    expect(back.trace.keptClasses?.keep).toBe(6);
    expect(Array.from(back.trace.keptClasses!.classes)).toEqual(Array.from(kept.keptClasses!.classes));
    expect(Array.from(back.trace.keptClasses!.zDyn)).toEqual(Array.from(kept.keptClasses!.zDyn));
    expect(back.run?.output.confidence.every((c) => c > 0 && c <= 1)).toBe(true);
  });

  it("a scrubbed frame's readout comes from its kept classes, and says what is estimated", async () => {
    const frame = await backend.handle('trace.frame', { frame: 10 });
    expect(frame.approximation).toMatch(/^6 of 40 classes kept a frame: the branches' probabilities exact/);
    const keptHere = Array.from(kept.keptClasses!.classes.subarray(10 * 6, 11 * 6));
    expect(frame.top).toHaveLength(3);
    for (const row of frame.top) expect(keptHere).toContain(row.classIndex);
    expect(frame.top[0]!.fused).toBeGreaterThanOrEqual(frame.top[1]!.fused);
  });

  it('the stream chart gets the gate, and no rolling line it could not state', async () => {
    const series = await backend.handle('recording.series', { maxPoints: 400 });
    expect(series.g.length).toBeGreaterThan(0);
    expect(series.g.every(Number.isFinite)).toBe(true);
    expect(series.rollingAccuracy.every((v) => v === null)).toBe(true);
    expect(series.rollingConfidence.every((v) => v === null)).toBe(true);
  });

  it('refuses, by name, everything that reads every class of every frame', async () => {
    const labelFile = join(dir, 'labels.csv');
    writeFileSync(labelFile, 'frame,label\n10,3\n');
    const refusals: Array<[string, () => Promise<unknown>, RegExp]> = [
      ['stream.label', () => backend.handle('stream.label', { frame: 10, label: 3 }), /^labelling frames needs/],
      ['tune.run', () => backend.handle('tune.run', {}), /^tuning needs/],
      ['analysis.run', () => backend.handle('analysis.run', {}), /^the paper's analyses needs/],
      [
        'metrics.compare',
        () =>
          backend.handle('metrics.compare', { a: DEFAULT_GATE_SETTINGS, b: { ...DEFAULT_GATE_SETTINGS, zeta: 0.4 } }),
        /^the A\/B comparison needs/,
      ],
      [
        'calibrator.compare',
        () => backend.handle('calibrator.compare', { methods: ['temperature'], split: { kind: 'kfold' } }),
        /^fitting output calibrators needs/,
      ],
      ['every class', () => backend.handle('metrics.snapshot', { classes: 'all' }), /^every class's metrics needs/],
      ['conformal.sets', () => backend.handle('conformal.sets', {}), /^conformal prediction sets needs/],
      ['labels.import', () => backend.handle('labels.import', { path: labelFile }), /^importing labels needs/],
      // the compacted labels are those that counted then: the other layer's may not be kept
      [
        'labels.useCorrections',
        () => backend.handle('labels.useCorrections', { use: false }),
        /^changing which labels count needs/,
      ],
    ];
    for (const [what, call, words] of refusals) {
      const error = await call().then(
        () => null,
        (thrown: { code: string; message: string }) => thrown,
      );
      expect(error, what).toMatchObject({ code: 'NOT_AVAILABLE', message: expect.stringMatching(words) });
      expect(error!.message, what).toMatch(NEEDS_EVERY_CLASS);
    }
    // nothing refused changed the recording, and an undo or redo with nothing to take back is no change
    expect(await backend.handle('labels.undo', {})).toBeNull();
    expect(await backend.handle('labels.redo', {})).toBeNull();
    expect((await backend.handle('session.get', {})).recording).toMatchObject({
      labelledFrameCount: 3000,
      unsaved: false,
    });
  });

  it('says it is a kept-class trace on a window with no labelled frame too', async () => {
    const unlabelled = join(dir, 'kept-unlabelled.arrow');
    writeFileSync(unlabelled, encodeTraceFile({ ...kept, labels: null }, null));
    await backend.handle('trace.load', { path: unlabelled, discard: true });
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.labelledFrameCount).toBe(0);
    expect(snapshot.kept).toEqual({ description: '6 of 40 classes kept a frame', unsettledFrames: 0 });
    await backend.handle('trace.load', { path: keptPath, discard: true });
  });

  it('a kept-class recent run reopens as the loaded trace does, and comparing it is refused by name', async () => {
    const folder = join(dir, 'runs');
    const store = await RecentRunsStore.open(folder);
    const withRuns = new KnobBackend({ recentRuns: store });
    try {
      const request = keepRequest(50, 4);
      const keptRequest = {
        ...request,
        trace: { ...kept },
        run: {
          settings: DEFAULT_GATE_SETTINGS,
          output: replay(kept, DEFAULT_GATE_SETTINGS, { logits: 'kept classes too' }),
        },
        description: { ...request.description, frameCount: 3000, labelledFrameCount: 3000 },
      };
      const keptRun = (await store.keep(keptRequest))!;
      const other = (await store.keep(keepRequest(50, 5)))!;
      expect(await withRuns.handle('runs.open', { id: keptRun.id, discard: true })).toMatchObject({ classCount: 40 });
      expect((await withRuns.handle('session.get', {})).recording?.keptClasses).toBe('6 of 40 classes kept a frame');
      expect((await withRuns.handle('metrics.snapshot', {})).kept?.description).toBe('6 of 40 classes kept a frame');
      await expect(withRuns.handle('runs.compare', { ids: [other.id, keptRun.id] })).rejects.toMatchObject({
        code: 'NOT_AVAILABLE',
        message: expect.stringMatching(new RegExp(`^comparing recent runs \\(${keptRun.id}\\) needs every class`)),
      });
      // read again from the files alone (the index rebuilt), it is listed
      rmSync(join(folder, 'index.json'), { force: true });
      expect((await RecentRunsStore.open(folder)).describe().runs.map((r) => r.id)).toContain(keptRun.id);
    } finally {
      await withRuns.close();
    }
  });

  it('an output calibrator and a bundle are refused before anything is computed', async () => {
    const basis = { version: 0, recordingId: 1, calibrator: { method: 'temperature' as const, temperature: 1.5 } };
    expect(() => metricsSnapshot(plainSource(kept), DEFAULT_GATE_SETTINGS, basis)).toThrow(
      /^the output calibrator \(temperature scaling, T = 1\.5\) needs every class of every frame/,
    );
    await expect(
      exportBundle({
        path: join(dir, 'kept.knob.zip'),
        trace: kept,
        traceName: keptPath,
        provenance: { model: null, labelImports: [] } as never,
        model: {} as never,
        gate: DEFAULT_GATE_SETTINGS,
        calibrator: null,
        includeModel: false,
      }),
    ).rejects.toThrow(
      /^a bundle \(its calibration data, reliability and step graph\) needs every class of every frame/,
    );
  });
});
