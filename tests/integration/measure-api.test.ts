/**
 * The desk's measurement calls through the real backend and the shipped model (issue 17):
 * `probe.step` records once per (parameters, model), replays at later knobs (no model: no
 * recording time), records again for other parameters, and is refused while the stream plays;
 * `tune.run` tunes the current recording by replay within the constraints and leaves the knobs
 * alone; both refuse clearly without a model or a recording; while a probe records, the stream
 * cannot start. Results are checked against the
 * contract (KNOB_CHECK_CONTRACT is on in tests). The probes also record over the open file source
 * (a real video at its own frame rate) and refuse a camera.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analysisSummaryLines, paperAnalyses, severityTable } from '../../src-shared/analysis';
import { discreteResponseMetrics } from '../../src-shared/gate/response-metrics';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { fashionMnistSample } from '../support/fashion-mnist';

const backend = new KnobBackend();
afterAll(async () => backend.close());

describe('probe.step and tune.run', () => {
  it('refuse without a model or a recording, naming what is missing', async () => {
    await expect(backend.handle('probe.step', {})).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/no model is loaded/),
    });
    await expect(backend.handle('tune.run', {})).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/no recording yet/),
    });
    await expect(backend.handle('analysis.run', {})).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/no recording yet/),
    });
  });

  it('the step probe records once, replays at new knobs, records again for new parameters', async () => {
    await backend.handle('model.load', { path: 'default', executionProviders: ['cpu'] });
    await backend.handle('source.open', { kind: 'embedded' });
    const params = { realisations: 3, framesPerLevel: 60 };
    const first = await backend.handle('probe.step', params);
    expect(first.recordMs).not.toBeNull();
    expect(first.tSeconds).toHaveLength(120);
    expect(first.description).toMatch(/shot noise 1 → 5 → 1, 3 realisations of 180 frames at 30 fps/);
    const knobs = await backend.handle('knobs.set', { gate: { zeta: 0.4, wnRadPerSec: 8 } });
    const again = await backend.handle('probe.step', params);
    expect(again.recordMs).toBeNull(); // a replay: the model did not run
    expect(again.settingsVersion).toBe(knobs.version);
    const overshoot = again.rows.find((r) => r.name === 'overshoot')!;
    expect(overshoot.discrete).toBeCloseTo(discreteResponseMetrics(knobs.gate, 1 / 30, 'app').overshootPercent, 6);
    expect(Math.abs(again.identified!.zeta / 0.4 - 1)).toBeLessThan(0.01);
    // the response stands out of its noise: its rise time measured, and no noise-floor note (below
    // the floor rise and settling would be null and measuredNote would say so: short-and-floored.test.ts)
    expect(again).toHaveProperty('measuredNote', null);
    expect(again.rows.find((r) => r.name === 'rise time 10-90 %')!.measured).not.toBeNull();
    const other = await backend.handle('probe.step', { ...params, realisations: 4 });
    expect(other.recordMs).not.toBeNull();
    expect(other.realisations).toBe(4);
  }, 120_000);

  it('while a probe records, playing, offline runs and loading a model are refused, naming the probe', async () => {
    const probing = backend.handle('probe.step', { realisations: 8, framesPerLevel: 300, seed: 5 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(backend.handle('stream.start', {})).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/the step probe is recording through the model: cancel it or wait/),
    });
    await expect(backend.handle('stream.runOffline', { maxFrames: 10 })).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
    });
    // refused up front, not by closing the model under the probe
    await expect(
      backend.handle('model.load', { path: 'default', executionProviders: ['cpu'], discard: true }),
    ).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(
        /the step probe is recording through the model: cancel it or wait before loading a model/,
      ),
    });
    expect((await probing).recordMs).not.toBeNull();
  }, 60_000);

  it('while a model loads, probes are refused rather than record through the model being replaced', async () => {
    const loading = backend.handle('model.load', { path: 'default', executionProviders: ['cpu'], discard: true });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await expect(backend.handle('probe.step', { realisations: 2, framesPerLevel: 20 })).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: 'the step probe runs the model: a model is loading; wait for it',
    });
    await loading;
    expect((await backend.handle('probe.step', { realisations: 2, framesPerLevel: 20 })).recordMs).not.toBeNull();
    await backend.handle('source.open', { kind: 'embedded' }); // for the next test, as before the load
  }, 60_000);

  it('the step probe is refused while the stream plays', async () => {
    await backend.handle('stream.start', { discard: true });
    await expect(backend.handle('probe.step', { realisations: 3, framesPerLevel: 60 })).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/pause the stream first/),
    });
    await backend.handle('stream.stop', {});
  }, 60_000);

  it('tune.run tunes the recording within the constraints and leaves the knobs alone', async () => {
    await backend.handle('source.open', { kind: 'embedded', discard: true });
    const run = await backend.handle('stream.runOffline', { maxFrames: 1500, discard: true });
    expect(run.framesProcessed).toBe(1500);
    const before = await backend.handle('knobs.get', {});
    const tuned = await backend.handle('tune.run', {
      metric: 'nll',
      constraints: { maxSettlingSeconds: 1.5, maxOvershootPercent: 10 },
    });
    expect(tuned.searchFrameCount).toBe(1050);
    expect(tuned.heldOutFrameCount).toBe(450);
    expect(tuned.foundFeasible).toBe(true);
    expect(tuned.best.feasible).toBe(true);
    expect(tuned.best.settlingTimeSeconds!).toBeLessThanOrEqual(1.5);
    expect(tuned.best.overshootPercent).toBeLessThanOrEqual(10);
    // no feasible grid point beats the refined best
    for (const c of tuned.grid.filter((c) => c.feasible)) expect(tuned.best.metric!).toBeLessThanOrEqual(c.metric!);
    expect(tuned.improvement.lo!).toBeLessThanOrEqual(tuned.improvement.hi!);
    expect(tuned.improvement.difference).toBeCloseTo(tuned.heldOut.best! - tuned.heldOut.current!, 12);
    expect(tuned.pareto.length).toBeGreaterThan(0);
    expect(await backend.handle('knobs.get', {})).toEqual(before);
  }, 120_000);

  it("analysis.run: the paper's analyses of the recording, in the words and figures of knob analyze", async () => {
    const levels = [0, 1, 2, 3, 4, 5].map((severity) => ({ atFrame: severity * 100, severity }));
    await backend.handle('source.open', {
      kind: 'embedded',
      schedule: { kind: 'step', corruption: 'shot_noise', levels },
      discard: true,
    });
    await backend.handle('stream.runOffline', { maxFrames: 600, discard: true });
    const knobs = await backend.handle('knobs.get', {});
    // each step reported as it starts (the work bar's fraction; issue 32)
    const steps: string[] = [];
    const call = {
      signal: new AbortController().signal,
      progress: (task: string, done: number, total: number | null) => steps.push(`${done}/${total} ${task}`),
    };
    const view = await backend.call('analysis.run', { permutations: 99 }, call);
    expect(steps).toEqual([
      '0/5 replaying 600 frames',
      '1/5 T_eff and CSR of every frame',
      '2/5 T_eff and CSR by severity',
      '3/5 agreement and the oracle advantage',
      '4/5 the gate-conditional calibration test (99 permutations)',
    ]);
    expect(view.settingsVersion).toBe(knobs.version);
    expect(view.frames).toBe(600);
    expect(view.labelledFrames).toBe(600);
    expect(view.bySeverity!.rows.map((row) => row[0])).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(view.exceptionCount).toBe(0);
    // the same as knob analyze on the saved recording
    const dir = mkdtempSync(join(tmpdir(), 'knob-analyses-'));
    try {
      const path = join(dir, 'staircase.arrow');
      await backend.handle('trace.save', { path });
      const { trace } = await readTraceFile(path);
      const offline = paperAnalyses(trace, knobs.gate, { permutations: 99 });
      expect(view.lines).toEqual(analysisSummaryLines(offline));
      expect(view.bySeverity).toEqual(severityTable(offline));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(view.lines[0]).toMatch(/^T_eff >= 1 on 100\.0 % of frames; 0 below 1/);
  }, 60_000);

  it('probes over the open source: a 25 fps video at its own frame rate; a camera or no source is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-probe-video-'));
    try {
      await backend.handle('model.load', { path: 'default', executionProviders: ['cpu'], discard: true });
      await expect(backend.handle('probe.frequency', { over: 'open-source' })).rejects.toMatchObject({
        code: 'NOT_AVAILABLE',
        message: 'the frequency probe over the open source: no source is open',
      });
      await backend.handle('source.open', { kind: 'camera', discard: true });
      await expect(backend.handle('probe.step', { over: 'open-source' })).rejects.toMatchObject({
        code: 'NOT_AVAILABLE',
        message: expect.stringMatching(/the step probe over the open source: .* is live; a probe needs a file source/),
      });
      // a real video: 240 test images as 25 fps lossless grayscale frames
      const video = join(dir, 'field-recording.avi');
      const { images } = fashionMnistSample(240);
      execFileSync(
        'ffmpeg',
        ['-hide_banner', '-loglevel', 'error', '-f', 'rawvideo', '-pix_fmt', 'gray', '-s', '28x28', '-r', '25'].concat([
          '-i',
          '-',
          '-c:v',
          'ffv1',
          '-pix_fmt',
          'gray',
          video,
        ]),
        { input: Buffer.concat(images) },
      );
      await backend.handle('source.open', { kind: 'video', path: video, discard: true });
      const params = { over: 'open-source' as const, realisations: 2, framesPerLevel: 30 };
      const first = await backend.handle('probe.step', params);
      expect(first.recordMs).not.toBeNull();
      expect(first.description).toMatch(
        /2 realisations of 90 frames at 25 fps over field-recording\.avi \(video 28 x 28 at 25\.000 fps, 240 frames/,
      );
      expect(first.tSeconds[1]! - first.tSeconds[0]!).toBeCloseTo(1 / 25, 9);
      const knobs = await backend.handle('knobs.get', {});
      expect(Math.abs(first.identified!.zeta / knobs.gate.zeta - 1)).toBeLessThan(0.01);
      // the same source again is a replay; the file opened anew, or the embedded set, is another recording
      expect((await backend.handle('probe.step', params)).recordMs).toBeNull();
      await backend.handle('source.open', { kind: 'video', path: video, discard: true });
      expect((await backend.handle('probe.step', params)).recordMs).not.toBeNull();
      expect((await backend.handle('probe.step', params)).recordMs).toBeNull();
      const embedded = await backend.handle('probe.step', { ...params, over: 'embedded' });
      expect(embedded.recordMs).not.toBeNull();
      expect(embedded.description).toMatch(/at 30 fps over embedded Fashion-MNIST test set/);
      // too short for the frequency probe: a typed error naming what it needs
      await expect(backend.handle('probe.frequency', { over: 'open-source' })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/the frequency probe needs \d+ frames .*; the source has 240/),
      });
      // Matroska does not state its frame count: refused with the file named, not guessed
      const mkv = join(dir, 'no-count.mkv');
      execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', video, '-c', 'copy', mkv]);
      await backend.handle('source.open', { kind: 'video', path: mkv, discard: true });
      await expect(backend.handle('probe.step', params)).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^no-count\.mkv \(video .*\): a probe needs a source whose length is known/),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
