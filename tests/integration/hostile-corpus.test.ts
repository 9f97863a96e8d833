/**
 * The hostile-input corpus, generated here from valid seed files of every kind the app reads:
 * ONNX models, NumPy .npy and .npz, IDX (plain and gzipped), PNG, JPEG, CSV, JSON, Arrow traces,
 * settings files, video, and camera frame packets. Each seed is truncated at several points,
 * mutated at random (seeded) and given a lying header; every case goes through the API (an
 * in-process backend) and, for the kinds a command reads, through the CLI (its main(), in this
 * process, stderr captured). A case may succeed; if it fails, it is a typed error whose message
 * starts with the file's path (exit 1 with `knob: <file>: ...`), never an internal error, a crash,
 * or a hang (each case has a time limit). The cost is printed.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { KnobError } from '../../src-shared/errors';
import { seededRandom, type RandomSource } from '../../src-shared/random';
import { main } from '../../src-main/cli/knob';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { settingsFile } from '../../src-main/core/recording/settings-file';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { serializeIdx } from '../../src-main/core/datasets/idx-file';
import { fashionMnistSample } from '../support/fashion-mnist';
import { testPatternVideo } from '../support/fashion-video';
import { npyBytes } from '../support/npy-writer';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';

const dir = mkdtempSync(join(tmpdir(), 'knob-corpus-'));
const sample = fashionMnistSample(64);
const random = seededRandom(7);
let backend: KnobBackend;
const costs: Record<string, { cases: number; ms: number }> = {};

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
}, 60_000);
afterAll(async () => {
  await backend?.close();
  const total = Object.values(costs).reduce((a, c) => ({ cases: a.cases + c.cases, ms: a.ms + c.ms }), {
    cases: 0,
    ms: 0,
  });
  process.stdout.write(
    `hostile corpus: ${total.cases} cases in ${(total.ms / 1000).toFixed(1)} s (${Object.entries(costs)
      .map(([kind, c]) => `${kind} ${c.cases} in ${(c.ms / 1000).toFixed(1)} s`)
      .join(', ')})\n`,
  );
});

/** Truncations, random byte mutations and a lying header, each a variant of the seed. */
function variants(
  seed: Uint8Array,
  r: RandomSource,
  lie: (bytes: Uint8Array) => Uint8Array,
  mutations = 4,
): Array<[string, Uint8Array]> {
  const out: Array<[string, Uint8Array]> = [];
  for (const fraction of [0, 0.02, 0.5, 0.98])
    out.push([`truncated-${fraction}`, seed.subarray(0, Math.floor(seed.length * fraction))]);
  for (let m = 0; m < mutations; m++) {
    const bytes = seed.slice();
    const flips = 1 + Math.floor(r() * 16);
    for (let f = 0; f < flips; f++) bytes[Math.floor(r() * Math.min(bytes.length, 4096))] = Math.floor(r() * 256);
    out.push([`mutated-${m}`, bytes]);
  }
  out.push(['lying-header', lie(seed.slice())]);
  return out;
}

/** Every variant of a seed on disk under `name` patterns: name(variant) gives the file name. */
function writeVariants(
  kind: string,
  seed: Uint8Array,
  fileName: (variant: string) => string,
  lie: (b: Uint8Array) => Uint8Array,
  mutations?: number,
): string[] {
  mkdirSync(join(dir, kind), { recursive: true });
  return variants(seed, random, lie, mutations).map(([variant, bytes]) => {
    const path = join(dir, kind, fileName(variant));
    writeFileSync(path, bytes);
    return path;
  });
}

/** A case through the API: success, or a typed error naming `path`. */
async function throughApi(path: string, call: () => Promise<unknown>): Promise<void> {
  const outcome = await Promise.race([
    call().then(
      () => null,
      (error: unknown) => error,
    ),
    new Promise((resolve) => setTimeout(() => resolve(new Error(`no answer within 30 s for ${path}`)), 30_000)),
  ]);
  if (outcome === null) return;
  expect(outcome, String(outcome)).toBeInstanceOf(KnobError);
  const error = outcome as KnobError;
  expect(error.code, error.message).not.toBe('INTERNAL');
  expect(error.message.startsWith(path), `${error.code}: ${error.message}`).toBe(true);
}

/** A case through the CLI's main(): exit 0, or exit 1 with one line `knob: <path>...`. */
async function throughCli(path: string, args: string[]): Promise<void> {
  const lines: string[] = [];
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    lines.push(
      ...String(chunk)
        .split('\n')
        .filter((l) => l.startsWith('knob: ')),
    );
    return true;
  });
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  let status: number;
  try {
    status = await main(args);
  } finally {
    stderr.mockRestore();
    stdout.mockRestore();
  }
  if (status === 0) return;
  expect(status, lines.join('\n')).toBe(1);
  expect(lines, lines.join('\n')).toHaveLength(1);
  expect(lines[0]).not.toMatch(/internal error/);
  expect(lines[0].startsWith(`knob: ${path}`), lines[0]).toBe(true);
}

async function timed(kind: string, cases: number, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  await work();
  const cost = (costs[kind] ??= { cases: 0, ms: 0 });
  cost.cases += cases;
  cost.ms += performance.now() - started;
}

/** Sets a big-endian u32 at `at` (a declared size or dimension). */
function declare(bytes: Uint8Array, at: number, value: number, littleEndian = false): Uint8Array {
  if (bytes.length >= at + 4) new DataView(bytes.buffer, bytes.byteOffset).setUint32(at, value, littleEndian);
  return bytes;
}

const images = new Uint8Array(16 * 784);
sample.images.slice(0, 16).forEach((image, i) => images.set(image, i * 784));
const labels = Uint8Array.from(sample.labels.slice(0, 16));

describe('the hostile-input corpus', () => {
  it('ONNX models: through the API (model.load) and the CLI (knob run --model)', async () => {
    const weights = classMeanWeights(sample.images, sample.labels, 10, 4);
    const seed = linearClassifier(weights);
    const paths = writeVariants(
      'onnx',
      seed,
      (v) => `${v}.onnx`,
      (b) => declare(b, 2, 0xffffffff),
      2,
    );
    const dataset = join(dir, 'onnx', 'tiny-images-idx3-ubyte');
    writeFileSync(dataset, serializeIdx({ dimensions: [16, 28, 28], data: images }));
    await timed('onnx', paths.length * 2, async () => {
      for (const path of paths) await throughApi(path, () => backend.handle('model.load', { path, discard: true }));
      for (const path of paths)
        await throughCli(path, [
          'run',
          '--model',
          path,
          '--source',
          dataset,
          '--limit',
          '8',
          '--out',
          join(dir, 'onnx-out'),
        ]);
    });
    await backend.handle('model.load', { path: 'default', discard: true });
  }, 120_000);

  it('NumPy .npy and .npz, CSV and JSON tables: through the CLI (knob metrics) and the API (source.open)', async () => {
    const logits = new Float32Array(16 * 10).map((_, i) => (i % 10) * 0.3);
    const labelsJson = join(dir, 'labels.json');
    writeFileSync(labelsJson, JSON.stringify(Array.from(labels)));
    const npy = writeVariants(
      'npy',
      npyBytes(logits, [16, 10]),
      (v) => `${v}.npy`,
      (b) => {
        const text = new TextDecoder('latin1').decode(b).replace('(16, 10)', '(99999999, 10)');
        return Uint8Array.from(text, (c) => c.charCodeAt(0));
      },
    );
    const npz = writeVariants(
      'npz',
      zipSync({ 'images.npy': npyBytes(images, [16, 28, 28]), 'labels.npy': npyBytes(Int32Array.from(labels), [16]) }),
      (v) => `${v}.npz`,
      (b) => declare(b, 22, 0x7fffffff, true),
    );
    const csv = writeVariants(
      'csv',
      new TextEncoder().encode(`a,b\n${Array.from({ length: 16 }, (_, i) => `${i % 3},${i % 5}`).join('\n')}\n`),
      (v) => `${v}.csv`,
      (b) => b.fill(0x2c, 0, 8),
    );
    const json = writeVariants(
      'json',
      new TextEncoder().encode(JSON.stringify(Array.from({ length: 16 }, (_, i) => [i % 3, i % 5]))),
      (v) => `${v}.json`,
      (b) => b.fill(0x5b, 0, 200),
    );
    await timed('tables', npy.length + npz.length * 2 + csv.length + json.length, async () => {
      for (const path of [...npy, ...npz, ...csv, ...json])
        await throughCli(path, ['metrics', '--logits', path, '--labels', labelsJson]);
      for (const path of npz)
        await throughApi(path, () => backend.handle('source.open', { kind: 'dataset', path, discard: true }));
    });
  }, 120_000);

  it('IDX, plain and gzipped: through the API (source.open) and the CLI (knob corrupt)', async () => {
    const idx = serializeIdx({ dimensions: [16, 28, 28], data: images });
    const plain = writeVariants(
      'idx',
      idx,
      (v) => `${v}-images-idx3-ubyte`,
      (b) => declare(b, 4, 0xffffffff),
    );
    const packed = writeVariants(
      'idx-gz',
      gzipSync(idx),
      (v) => `${v}-images-idx3-ubyte.gz`,
      (b) => declare(b, b.length - 4, 0xffffffff, true),
    );
    for (const path of [...plain, ...packed])
      writeFileSync(path.replace('images-idx3', 'labels-idx1'), serializeIdx({ dimensions: [16], data: labels }));
    await timed('idx', (plain.length + packed.length) * 2, async () => {
      for (const path of [...plain, ...packed]) {
        await throughApi(path, () => backend.handle('source.open', { kind: 'dataset', path, discard: true }));
        await throughCli(path, [
          'corrupt',
          '--input',
          path,
          '--corruption',
          'fog',
          '--severity',
          '2',
          '--out',
          join(dir, 'corrupted.idx'),
        ]);
      }
    });
  }, 120_000);

  it('PNG and JPEG in image folders: through the API (source.open) and the CLI (knob run --source)', async () => {
    const png = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
    png.data = Buffer.from(sample.images[0]);
    const pngBytes = PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
    const rgba = new Uint8Array(28 * 28 * 4).map((_, i) => sample.images[1][i >> 2]);
    const jpegBytes = jpeg.encode({ width: 28, height: 28, data: rgba }, 90).data;
    const folders: string[] = [];
    for (const [kind, seed, extension, lie] of [
      ['png', pngBytes, '.png', (b: Uint8Array) => declare(b, 16, 0x7fffffff)],
      ['jpeg', jpegBytes, '.jpg', (b: Uint8Array) => declare(b, 160, 0xffffffff)],
    ] as const) {
      for (const [variant, bytes] of variants(seed, random, lie)) {
        const folder = join(dir, `${kind}-${variant}`);
        mkdirSync(folder);
        writeFileSync(join(folder, `image${extension}`), bytes);
        folders.push(folder);
      }
    }
    await timed('images', folders.length + 6, async () => {
      for (const folder of folders)
        await throughApi(folder, () => backend.handle('source.open', { kind: 'folder', path: folder, discard: true }));
      for (const folder of [folders[1], folders[4], folders[8], folders[10], folders[13], folders[17]]) {
        await throughCli(folder, ['run', '--source', folder, '--limit', '4', '--out', join(dir, 'images-out')]);
      }
    });
  }, 120_000);

  it('Arrow traces, settings files and bundles: through the API (trace.load, bundle.import) and the CLI (replay, metrics --trace, verify)', async () => {
    await backend.handle('source.open', { kind: 'embedded', discard: true });
    await backend.handle('stream.runOffline', { maxFrames: 32, discard: true });
    const savedTrace = join(dir, 'saved.arrow');
    await backend.handle('trace.save', { path: savedTrace });
    const exported = join(dir, 'export.knob.zip');
    await backend.handle('bundle.export', { path: exported, includeModel: false });
    const traces = writeVariants(
      'arrow',
      readFileSync(savedTrace),
      (v) => `${v}.arrow`,
      (b) => declare(b, 8, 0x7fffffff, true),
    );
    const settings = writeVariants(
      'settings',
      new TextEncoder().encode(
        settingsFile({ gate: DEFAULT_GATE_SETTINGS, model: null, modelSha256: null }).data as string,
      ),
      (v) => `${v}.json`,
      (b) => b.fill(0x7b, 0, 100),
    );
    // a zip's first local header declares the entry's unpacked size at byte 22
    const bundles = writeVariants(
      'bundle',
      readFileSync(exported),
      (v) => `${v}.knob.zip`,
      (b) => declare(b, 22, 0x7fffffff, true),
    );
    await timed('traces+settings+bundles', traces.length * 3 + settings.length + bundles.length * 2, async () => {
      for (const path of traces) {
        await throughApi(path, () => backend.handle('trace.load', { path, discard: true }));
        await throughCli(path, ['replay', path, '--out', join(dir, 'replayed')]);
        await throughCli(path, ['metrics', '--trace', path]);
      }
      for (const path of settings) await throughApi(path, () => backend.handle('bundle.import', { path }));
      for (const path of bundles) {
        await throughApi(path, () => backend.handle('bundle.import', { path }));
        await throughCli(path, ['verify', path]);
      }
    });
  }, 180_000);

  it('video: through the API (source.open) and the CLI (knob run --source)', async () => {
    const clip = join(dir, 'clip.mp4');
    testPatternVideo(clip, 1, '32x32', 10);
    const paths = writeVariants(
      'video',
      readFileSync(clip),
      (v) => `${v}.mp4`,
      (b) => declare(b, 0, 0xffffffff),
      2,
    );
    await timed('video', paths.length + 3, async () => {
      for (const path of paths)
        await throughApi(path, () => backend.handle('source.open', { kind: 'video', path, discard: true }));
      for (const path of [paths[0], paths[2], paths[5]])
        await throughCli(path, ['run', '--source', path, '--limit', '4', '--out', join(dir, 'video-out')]);
    });
  }, 120_000);

  it('camera frame packets: malformed or lying packets are refused before they reach the recording', async () => {
    await backend.handle('source.open', { kind: 'camera', discard: true });
    await backend.handle('stream.start', {});
    const seed = encodeFramePacket({
      width: 28,
      height: 28,
      channels: 1,
      timestampSeconds: 5,
      label: 3,
      pixels: sample.images[0],
    });
    const cases = variants(seed, random, (b) => declare(b, 8, 0xffffffff, true), 40);
    cases.push([
      'label-out-of-range',
      encodeFramePacket({
        width: 28,
        height: 28,
        channels: 1,
        timestampSeconds: 6,
        label: 10,
        pixels: sample.images[0],
      }),
    ]);
    await timed('frame packets', cases.length, async () => {
      for (const [, packet] of cases) {
        try {
          backend.pushFrame(packet);
        } catch (error) {
          expect(error).toBeInstanceOf(KnobError);
          expect((error as KnobError).code).not.toBe('INTERNAL');
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    await backend.handle('stream.stop', {});
    // Nothing invalid reached the recording: every recorded label is a class or unknown.
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.frameCount).toBeGreaterThanOrEqual(0);
    const path = join(dir, 'camera.arrow');
    if (snapshot.frameCount > 0) {
      await backend.handle('trace.save', { path });
      const { readTraceFile } = await import('../../src-main/core/recording/trace-arrow');
      const file = await readTraceFile(path);
      for (const label of file.trace.labels ?? []) expect(label === -1 || (label >= 0 && label < 10)).toBe(true);
    }
  });
});
