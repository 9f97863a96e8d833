/**
 * A real-sized network through the real CLI (issue 29, 3): a MobileNet-like 224 x 224 x 3 model of
 * 1,000 classes (tests/support/mobilenet-like.ts) over a video made by ffmpeg. `knob run` chooses
 * its batch from the input size and says so, and writes a 1,000-class trace (or, with --keep, the
 * kept-class trace `knob compact` makes of it, recorded as the frames arrive); `knob bench` takes
 * any model and any source (the frames fitted to the model's input), where it once took only the
 * embedded 28 x 28 set.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { KEPT_CLASS_ARRAYS } from '../../src-shared/trace/kept-classes';
import { testPatternVideo } from '../support/fashion-video';
import { knob } from '../support/knob-cli';
import { mobilenetLikeClassifier } from '../support/mobilenet-like';

const dir = mkdtempSync(join(tmpdir(), 'knob-real-sized-'));
const model = join(dir, 'mobilenet-like.onnx');
const video = join(dir, 'street.mp4');

beforeAll(() => {
  writeFileSync(model, mobilenetLikeClassifier());
  testPatternVideo(video, 2);
});

describe('a 224 x 224 x 3, 1,000-class network', () => {
  it('knob run chooses its batch from the input size, says so, and records 1,000 classes', async () => {
    const run40 = (out: string, ...more: string[]) =>
      knob('run', '--model', model, '--source', video, '--limit', '40', ...more, '--out', out);
    const out = join(dir, 'run');
    const run = await run40(out);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/batch: 22 frames a batch: 224x224x3 input, about 23 MiB a frame/);
    const { trace } = await readTraceFile(join(out, 'trace.arrow'));
    expect(trace.classCount).toBe(1000);
    expect(trace.frameCount).toBe(40);
    // --keep 32: the kept-class trace knob compact makes of that one, recorded as the frames arrive
    const kept = join(dir, 'kept');
    const keptRun = await run40(kept, '--keep', '32');
    expect(keptRun.status, keptRun.stderr).toBe(0);
    const compacted = join(dir, 'compacted.arrow');
    expect((await knob('compact', join(out, 'trace.arrow'), '--keep', '32', '--out', compacted)).status).toBe(0);
    const [recorded, made] = await Promise.all(
      [join(kept, 'trace.arrow'), compacted].map((path) => readTraceFile(path, undefined, 'kept classes too')),
    );
    for (const key of KEPT_CLASS_ARRAYS)
      expect(Array.from(recorded!.trace.keptClasses![key]), key).toEqual(Array.from(made!.trace.keptClasses![key]));
    expect(statSync(join(kept, 'trace.arrow')).size).toBeLessThan(statSync(join(out, 'trace.arrow')).size / 10);
    // its metrics.json and report say what it keeps (the video has no labels: no figures to bound)
    expect(JSON.parse(readFileSync(join(kept, 'metrics.json'), 'utf8'))).toMatchObject({
      labelledFrameCount: 0,
      kept: { keep: 32, classCount: 1000, description: '32 of 1000 classes kept a frame' },
    });
    const given = await knob(
      'run',
      '--model',
      model,
      '--source',
      video,
      '--limit',
      '8',
      '--batch',
      '4',
      '--out',
      join(dir, 'given'),
    );
    expect(given.stderr).toMatch(/batch: 4 frames a batch \(--batch\)/);
  }, 120_000);

  it('knob bench measures it over the video, frames fitted to its input', async () => {
    const bench = await knob(
      'bench',
      '--model',
      model,
      '--source',
      video,
      '--rounds',
      '1',
      '--live-seconds',
      '1',
      '--live-fps',
      '10',
      '--json',
    );
    expect(bench.status, bench.stderr).toBe(0);
    const report = JSON.parse(bench.stdout) as {
      source: string;
      batch: string;
      batchSize: number;
      frames: number;
      framesChosen: string;
      engine: { framesPerSecond: number };
      live: { submitted: number; processed: number; dropped: number };
    };
    expect(report.source).toMatch(/^video 320 x 240 .* decoded to 224 x 224/);
    expect(report.batchSize).toBe(22);
    // No --frames: about 2 s of bare inference a measurement, in whole batches, at least two.
    expect(report.framesChosen).toMatch(/^about 2 s of bare inference at the warm-up's \d+ frames\/s/);
    expect(report.frames % 22).toBe(0);
    expect(report.frames).toBeGreaterThanOrEqual(44);
    expect(report.live.submitted).toBe(10);
    expect(report.live.processed + report.live.dropped).toBe(10);
    expect(report.engine.framesPerSecond).toBeGreaterThan(0);
  }, 180_000);
});
