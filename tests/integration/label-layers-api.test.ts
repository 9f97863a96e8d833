/**
 * The label layer on the real backend and CLI (issue 27): operator corrections with undo, the
 * ground truth kept (in memory and in the saved trace), the metrics following each step and the
 * visible choice of which labels they read; labels imported for a video from a CSV by time, into a
 * trace that says which labels were imported; a frame the source labelled is never replaced.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { storedProvenanceOf } from '../../src-main/core/report/provenance';
import { FASHION_MNIST_LABELS } from '../../src-main/core/datasets/embedded-dataset';
import { fashionVideo } from '../support/fashion-video';
import { knob } from '../support/knob-cli';

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-label-layers-'));
const accuracy = async (): Promise<{ labelled: number; value: number }> => {
  const m = await backend.handle('metrics.snapshot', { detail: 'light' });
  return { labelled: m.labelledFrameCount, value: m.values.find((e) => e.name === 'accuracy')!.value! };
};

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', { kind: 'embedded', discard: true });
  await backend.handle('stream.runOffline', { maxFrames: 40, discard: true });
}, 120_000);
afterAll(async () => backend?.close());

describe('operator corrections', () => {
  it('are a layer over the truth with undo and redo; the metrics follow each step; the file keeps both', async () => {
    const before = await accuracy();
    const truth = (await backend.handle('trace.frame', { frame: 0 })).label!;
    const wrong = (truth + 1) % 10;
    const edit = await backend.handle('stream.label', { frame: 0, label: wrong });
    expect(edit).toMatchObject({ frame: 0, truth, correction: wrong, label: wrong });
    expect(edit.recording.labels).toMatchObject({ fromSource: 40, corrections: 1, canUndo: true });
    const after = await accuracy();
    expect(after.labelled).toBe(before.labelled);
    expect(after.value).not.toBeCloseTo(before.value, 10);

    // the metrics may read the truth alone: a visible choice, the correction kept
    await backend.handle('labels.useCorrections', { use: false });
    expect((await accuracy()).value).toBeCloseTo(before.value, 12);
    await backend.handle('labels.useCorrections', { use: true });
    expect((await accuracy()).value).toBeCloseTo(after.value, 12);

    expect(await backend.handle('labels.undo', {})).toMatchObject({ frame: 0, truth, correction: -1, label: truth });
    expect((await accuracy()).value).toBeCloseTo(before.value, 12);
    expect(await backend.handle('labels.redo', {})).toMatchObject({ frame: 0, correction: wrong });
    expect(await backend.handle('labels.redo', {})).toBeNull();

    const path = join(dir, 'corrected.arrow');
    await backend.handle('trace.save', { path });
    const file = await readTraceFile(path);
    expect(file.trace.labelLayers!.truth[0]).toBe(truth); // the file's label column: the truth
    expect(file.trace.labelLayers!.operator[0]).toBe(wrong);
    expect(file.trace.labels![0]).toBe(wrong); // what the metrics read, restored
    await backend.handle('trace.load', { path, discard: true });
    expect((await backend.handle('session.get', {})).recording!.labels).toMatchObject({ corrections: 1 });
    expect((await accuracy()).value).toBeCloseTo(after.value, 12);
  }, 120_000);
});

describe('labels imported for a video', () => {
  it('by time from a CSV, in the desk and through knob run --label-file; the source labels are never replaced', async () => {
    const video = fashionVideo(dir, 30, 10);
    const csv = join(dir, 'labels.csv');
    // seconds at 10 fps: [0, 1) is frames 0-9 (a CSV range), then frames 12 and 20 by their time (JSON)
    writeFileSync(csv, `start_time,end_time,label\n0,1,${FASHION_MNIST_LABELS[video.labels[0]!]}\n`);
    const times = join(dir, 'times.json');
    writeFileSync(
      times,
      JSON.stringify(
        [12, 20].map((f) => ({ time: f / 10, label: FASHION_MNIST_LABELS[video.labels[f]!]!.toUpperCase() })),
      ),
    );
    await backend.handle('source.open', { kind: 'video', path: video.path, discard: true });
    await backend.handle('stream.runOffline', { discard: true });
    const ranged = await backend.handle('labels.import', { path: csv });
    expect(ranged).toMatchObject({ framesLabelled: 10, key: 'time', file: { kind: 'file', name: 'labels.csv' } });
    const single = await backend.handle('labels.import', { path: times });
    expect(single.recording.labels).toMatchObject({ fromSource: 0, imported: 12 });
    expect((await backend.handle('trace.frame', { frame: 12 })).label).toBe(video.labels[12]);
    expect((await backend.handle('trace.frame', { frame: 11 })).label).toBeNull();

    const out = join(dir, 'run-labels');
    const run = await knob(
      'run',
      '--model',
      'default',
      '--source',
      video.path,
      '--label-file',
      csv,
      '--out',
      out,
      '--json',
    );
    expect(run.status, run.stderr).toBe(0);
    const file = await readTraceFile(join(out, 'trace.arrow'));
    expect(Array.from(file.trace.labels!.subarray(0, 11))).toEqual([...Array(10).fill(video.labels[0]), -1]);
    expect(file.trace.labelLayers!.origin[0]).toBe(2); // imported
    expect(storedProvenanceOf(file.context)!.labelImports).toEqual([
      { file: expect.objectContaining({ kind: 'file', name: 'labels.csv' }), frames: 10 },
    ]);

    // the embedded set has its own labels: an import that disagrees is refused, naming the frames
    await backend.handle('source.open', { kind: 'embedded', discard: true });
    await backend.handle('stream.runOffline', { maxFrames: 20, discard: true });
    const clash = join(dir, 'clash.csv');
    const truth0 = (await backend.handle('trace.frame', { frame: 0 })).label!;
    writeFileSync(clash, `frame,label_index\n0,${(truth0 + 1) % 10}\n`);
    await expect(backend.handle('labels.import', { path: clash })).rejects.toThrow(
      /clash\.csv: 1 frames \(the first 0\) already have the source's own label/,
    );
  }, 180_000);
});
