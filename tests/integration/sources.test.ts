/**
 * Frame sources on real files: IDX, NumPy (.npz and a folder of .npy), ImageFolder, CSV manifest,
 * plain image folders (PNG and JPEG), video decoded by ffmpeg with presentation timestamps; and the
 * hostile inputs each must refuse with a typed error naming the file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../src-shared/errors';
import { writeIdxFile } from '../../src-main/core/datasets/idx-file';
import type { FrameSource } from '../../src-main/core/sources/frame-source';
import { openSource, openSourcePath } from '../../src-main/core/sources/open-source';
import { openVideoSource } from '../../src-main/core/sources/video-source';
import { fashionMnistSample } from '../support/fashion-mnist';
import { npyBytes } from '../support/npy-writer';
import { testPatternVideo } from '../support/fashion-video';

const dir = mkdtempSync(join(tmpdir(), 'knob-sources-'));
const sample = fashionMnistSample(40);
const target = { width: 28, height: 28, channels: 1 as const };

function png(image: Uint8Array, width = 28, height = 28): Buffer {
  const file = new PNG({ width, height, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  file.data = Buffer.from(image);
  return PNG.sync.write(file, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
}

async function collect(source: FrameSource, batch = 16) {
  const frames: Uint8Array[] = [];
  const labels: number[] = [];
  const times: number[] = [];
  for await (const b of source.batches(batch)) {
    const size = source.info.width * source.info.height * source.info.channels;
    for (let i = 0; i < b.count; i++) frames.push(b.frames.slice(i * size, (i + 1) * size));
    if (b.labels) labels.push(...b.labels);
    times.push(...b.timestampsSeconds);
  }
  return { frames, labels, times };
}

async function expectKnobError(promise: Promise<unknown>, code: string, pattern: RegExp): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KnobError);
  expect((error as KnobError).code).toBe(code);
  expect((error as KnobError).message).toMatch(pattern);
}

describe('dataset sources', () => {
  it('the embedded stream: 10,000 labelled Fashion-MNIST images at the declared rate', async () => {
    const source = await openSourcePath('default', { target, frameRateHz: 25 });
    expect(source.info).toMatchObject({
      kind: 'embedded',
      frameCount: 10000,
      hasLabels: true,
      timestampSource: 'declared-rate',
    });
    const first = (await source.batches(4).next()).value!;
    expect(Array.from(first.frames.subarray(0, 784))).toEqual(Array.from(sample.images[0]));
    expect(Array.from(first.labels!)).toEqual(sample.labels.slice(0, 4));
    expect(Array.from(first.timestampsSeconds)).toEqual([0, 1 / 25, 2 / 25, 3 / 25]);
  });

  it('IDX files with labels found beside them', async () => {
    const images = new Uint8Array(40 * 784);
    sample.images.forEach((image, i) => images.set(image, i * 784));
    await writeIdxFile(join(dir, 'set-images-idx3-ubyte.gz'), { dimensions: [40, 28, 28], data: images });
    await writeIdxFile(join(dir, 'set-labels-idx1-ubyte.gz'), {
      dimensions: [40],
      data: Uint8Array.from(sample.labels),
    });
    const opened = await openSourcePath(join(dir, 'set-images-idx3-ubyte.gz'), { target });
    const identity = opened.info.identity;
    const got = await collect(opened);
    expect(got.frames).toHaveLength(40);
    expect(got.labels).toEqual(sample.labels);
    // the labels file is part of the data's identity: the same images relabelled are another source
    expect(identity).toMatchObject({
      kind: 'folder',
      name: 'set-images-idx3-ubyte.gz + set-labels-idx1-ubyte.gz',
      fileCount: 2,
    });
    await writeIdxFile(join(dir, 'set-labels-idx1-ubyte.gz'), {
      dimensions: [40],
      data: Uint8Array.from(sample.labels, (label) => (label + 1) % 10),
    });
    const relabelled = (await openSourcePath(join(dir, 'set-images-idx3-ubyte.gz'), { target })).info.identity;
    expect(relabelled).toMatchObject({ kind: 'folder', fileCount: 2 });
    expect((relabelled as { sha256: string }).sha256).not.toBe((identity as { sha256: string }).sha256);
  });

  it('NumPy: an .npz archive and a folder with images.npy / labels.npy', async () => {
    const images = new Uint8Array(40 * 784);
    sample.images.forEach((image, i) => images.set(image, i * 784));
    writeFileSync(
      join(dir, 'set.npz'),
      zipSync({
        'x_test.npy': npyBytes(images, [40, 28, 28]),
        'y_test.npy': npyBytes(BigInt64Array.from(sample.labels.map(BigInt)), [40]),
      }),
    );
    const fromNpz = await collect(await openSourcePath(join(dir, 'set.npz'), { target }));
    expect(fromNpz.labels).toEqual(sample.labels);
    expect(Array.from(fromNpz.frames[7])).toEqual(Array.from(sample.images[7]));
    const folder = join(dir, 'npy');
    mkdirSync(folder);
    // Float pixels in [0, 1] are accepted and scaled to bytes.
    writeFileSync(
      join(folder, 'images.npy'),
      npyBytes(
        Float32Array.from(images, (b) => b / 255),
        [40, 28, 28, 1],
      ),
    );
    writeFileSync(join(folder, 'labels.npy'), npyBytes(Int32Array.from(sample.labels), [40]));
    const folderSource = await openSourcePath(folder, { target });
    const folderIdentity = folderSource.info.identity as { kind: string; name: string; sha256: string };
    const fromFolder = await collect(folderSource);
    expect(Array.from(fromFolder.frames[3])).toEqual(Array.from(sample.images[3]));
    expect(fromFolder.labels).toEqual(sample.labels);
    expect(folderIdentity).toMatchObject({ kind: 'folder', name: 'images.npy + labels.npy', fileCount: 2 });
    writeFileSync(
      join(folder, 'labels.npy'),
      npyBytes(
        Int32Array.from(sample.labels, (l) => (l + 1) % 10),
        [40],
      ),
    );
    const relabelled = (await openSourcePath(folder, { target })).info.identity as { sha256: string };
    expect(relabelled.sha256).not.toBe(folderIdentity.sha256);
  });

  it('ImageFolder (class = folder name, sorted), a CSV manifest of JPEGs, and an unlabelled folder', async () => {
    const root = join(dir, 'imagefolder');
    for (const name of ['bag', 'coat']) mkdirSync(join(root, name), { recursive: true });
    writeFileSync(join(root, 'bag', 'a.png'), png(sample.images[0]));
    writeFileSync(join(root, 'coat', 'b.png'), png(sample.images[1]));
    writeFileSync(join(root, 'coat', 'c.png'), png(sample.images[2]));
    const folder = await openSourcePath(root, { target });
    expect(folder.info).toMatchObject({ labelNames: ['bag', 'coat'], hasLabels: true, frameCount: 3 });
    expect((await collect(folder)).labels).toEqual([0, 1, 1]);

    const manifestDir = join(dir, 'manifest');
    mkdirSync(manifestDir);
    for (let i = 0; i < 3; i++) {
      const rgba = new Uint8Array(784 * 4);
      for (let p = 0; p < 784; p++)
        rgba.set([sample.images[i][p], sample.images[i][p], sample.images[i][p], 255], p * 4);
      writeFileSync(join(manifestDir, `${i}.jpg`), jpeg.encode({ data: rgba, width: 28, height: 28 }, 95).data);
    }
    writeFileSync(join(manifestDir, 'manifest.csv'), 'path,label\n0.jpg,Sneaker\n1.jpg,Bag\n2.jpg,Sneaker\n');
    const manifest = await openSourcePath(manifestDir, { target });
    expect(manifest.info.labelNames).toEqual(['Bag', 'Sneaker']);
    const got = await collect(manifest);
    expect(got.labels).toEqual([1, 0, 1]);
    expect(manifest.info.channels).toBe(1); // grey JPEGs stay grey
    const meanError = got.frames[0].reduce((s, v, p) => s + Math.abs(v - sample.images[0][p]), 0) / 784;
    expect(meanError).toBeLessThan(4); // JPEG at quality 95

    const plain = join(dir, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, '1.png'), png(sample.images[5]));
    const unlabelled = await openSourcePath(plain, { target });
    expect(unlabelled.info.hasLabels).toBe(false);
  });
});

describe('video through ffmpeg', () => {
  const frames = join(dir, 'frames');
  const video = join(dir, 'clip.mkv');

  it('decodes to the model size with presentation timestamps', async () => {
    mkdirSync(frames);
    // 56 x 56 frames (each image doubled), lossless FFV1 at 10 fps: area scaling back to 28 x 28 is exact.
    for (let i = 0; i < 12; i++) {
      const big = new Uint8Array(56 * 56);
      for (let y = 0; y < 56; y++)
        for (let x = 0; x < 56; x++) big[y * 56 + x] = sample.images[i][(y >> 1) * 28 + (x >> 1)];
      writeFileSync(join(frames, `${String(i).padStart(3, '0')}.png`), png(big, 56, 56));
    }
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-y',
      '-framerate',
      '10',
      '-i',
      join(frames, '%03d.png'),
      '-c:v',
      'ffv1',
      '-pix_fmt',
      'gray',
      video,
    ]);
    const source = await openSourcePath(video, { target });
    expect(source.info).toMatchObject({
      kind: 'video',
      width: 28,
      height: 28,
      timestampSource: 'pts',
      hasLabels: false,
    });
    expect(source.info.frameRateHz).toBeCloseTo(10, 6);
    const got = await collect(source, 5);
    expect(got.frames).toHaveLength(12);
    got.times.forEach((t, i) => expect(t).toBeCloseTo(i / 10, 6));
    for (let i = 0; i < 12; i++) expect(Array.from(got.frames[i])).toEqual(Array.from(sample.images[i]));
  });

  it('a camera-sized video gives the same frames and times in any batch size, and from any frame', async () => {
    // 320 x 240 decoded to 224 x 224 RGB: one frame (147 KiB) is more than a pipe delivers at a
    // time (64 KiB), so a batch is filled across chunks and a chunk can end mid-frame; 480 frames
    // (69 MiB) are more than a batch's buffer starts at (64 MiB), so the one batch asked for all of
    // them grows it
    const clip = testPatternVideo(join(dir, 'pattern.mp4'), 16);
    const source = await openSourcePath(clip, { target: { width: 224, height: 224, channels: 3 } });
    const size = source.info.width * source.info.height * source.info.channels;
    const whole = await collect(source, 600);
    expect(whole.frames).toHaveLength(480);
    expect(new Set(whole.frames.map((f) => Buffer.from(f).toString('base64'))).size).toBeGreaterThan(1);
    const sameFrames = (frames: Uint8Array[], from: number) =>
      expect(frames.map((f, i) => Buffer.compare(f, whole.frames[from + i]!))).toEqual(new Array(480 - from).fill(0));
    for (const batch of [7, 64]) {
      const got = await collect(source, batch);
      expect(got.times).toEqual(whole.times);
      sameFrames(got.frames, 0);
    }
    const resumed: Uint8Array[] = [];
    let firstFrame = -1;
    for await (const b of source.batches(7, 11)) {
      if (firstFrame < 0) firstFrame = b.first;
      for (let i = 0; i < b.count; i++) resumed.push(b.frames.slice(i * size, (i + 1) * size));
    }
    expect(firstFrame).toBe(11);
    sameFrames(resumed, 11);
  });

  it('a corrupt video and a missing ffmpeg are typed errors naming the file or the program', async () => {
    const broken = join(dir, 'broken.mp4');
    writeFileSync(broken, readFileSync(video).subarray(0, 200));
    await expectKnobError(openSourcePath(broken, { target }), 'INVALID_INPUT', /broken\.mp4: not a readable video/);
    await expectKnobError(
      openVideoSource(video, { target, ffprobe: 'ffprobe-not-installed' }),
      'MISSING_PROGRAM',
      /ffprobe-not-installed was not found on PATH/,
    );
  });
});

describe('long opens', () => {
  it('an image folder reports progress per file and stops with CANCELLED when aborted', async () => {
    const folder = join(dir, 'many');
    mkdirSync(folder);
    for (let i = 0; i < 40; i++)
      writeFileSync(join(folder, `${String(i).padStart(3, '0')}.png`), png(sample.images[i]));
    const seen: number[] = [];
    const complete = await openSourcePath(folder, { target, onProgress: (done, total) => seen.push(done / total) });
    expect(complete.info.frameCount).toBe(40);
    expect(seen.length).toBe(40);
    expect(seen[0]).toBe(0);
    const controller = new AbortController();
    const opening = openSourcePath(folder, {
      target,
      signal: controller.signal,
      onProgress: (done) => done === 5 && controller.abort(),
    });
    await expectKnobError(opening, 'CANCELLED', /many: opening cancelled after 6 of 40 images/);
  });
});

describe('hostile datasets', () => {
  it('empty, unreadable and wrong-size inputs are refused by name', async () => {
    await writeIdxFile(join(dir, 'empty-images-idx3-ubyte'), { dimensions: [0, 28, 28], data: new Uint8Array(0) });
    await expectKnobError(
      openSourcePath(join(dir, 'empty-images-idx3-ubyte'), { target }),
      'INVALID_INPUT',
      /empty-images-idx3-ubyte: the dataset is empty/,
    );
    await expectKnobError(openSourcePath(join(dir, 'nowhere'), { target }), 'INVALID_INPUT', /nowhere: does not exist/);
    writeFileSync(join(dir, 'garbage-images-idx3-ubyte'), 'not idx at all');
    await expectKnobError(
      openSourcePath(join(dir, 'garbage-images-idx3-ubyte'), { target }),
      'INVALID_INPUT',
      /garbage-images-idx3-ubyte: not an IDX file/,
    );
    const mixed = join(dir, 'mixed');
    mkdirSync(mixed);
    writeFileSync(join(mixed, 'a.png'), png(sample.images[0]));
    writeFileSync(join(mixed, 'b.png'), png(new Uint8Array(30 * 30), 30, 30));
    await expectKnobError(
      openSourcePath(mixed, { target }),
      'INVALID_INPUT',
      /b\.png: image is 30 x 30, the folder's images are 28 x 28/,
    );
    writeFileSync(join(mixed, 'c.png'), 'truncated');
    const empty = join(dir, 'no-images');
    mkdirSync(empty);
    await expectKnobError(openSourcePath(empty, { target }), 'INVALID_INPUT', /no PNG or JPEG images found/);
    const badNpz = join(dir, 'bad.npz');
    writeFileSync(badNpz, 'PK not really');
    await expectKnobError(openSourcePath(badNpz, { target }), 'INVALID_INPUT', /bad\.npz: not a readable zip archive/);
  });
});

describe('a source of a named kind', () => {
  it('opens a path of that kind and refuses a path of another kind, naming it', async () => {
    const npz = join(dir, 'kinds.npz');
    const images = new Uint8Array(4 * 784);
    writeFileSync(
      npz,
      zipSync({ 'images.npy': npyBytes(images, [4, 28, 28]), 'labels.npy': npyBytes(new Int32Array(4), [4]) }),
    );
    const folder = join(dir, 'kinds-folder');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'a.png'), png(sample.images[0]));
    expect((await openSource({ kind: 'dataset', path: npz }, { target })).info).toMatchObject({
      kind: 'dataset',
      frameCount: 4,
    });
    expect((await openSource({ kind: 'folder', path: folder }, { target })).info).toMatchObject({
      kind: 'folder',
      frameCount: 1,
    });
    await expectKnobError(
      openSource({ kind: 'video', path: npz }, { target }),
      'INVALID_INPUT',
      /kinds\.npz: not a video file/,
    );
    await expectKnobError(
      openSource({ kind: 'folder', path: npz }, { target }),
      'INVALID_INPUT',
      /kinds\.npz: not a folder/,
    );
    await expectKnobError(
      openSource({ kind: 'dataset', path: folder }, { target }),
      'INVALID_INPUT',
      /kinds-folder: not a dataset folder \(no images\.npy/,
    );
    await expectKnobError(
      openSource({ kind: 'dataset', path: join(folder, 'a.png') }, { target }),
      'INVALID_INPUT',
      /a\.png: not a dataset/,
    );
    await expectKnobError(
      openSource({ kind: 'embedded', path: npz }, { target }),
      'BAD_REQUEST',
      /the embedded source takes no path/,
    );
    await expectKnobError(openSource({ kind: 'video' }, { target }), 'BAD_REQUEST', /a video source needs a path/);
  });
});
