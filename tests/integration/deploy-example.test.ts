/**
 * The reference consumer (examples/deploy/node/run-bundle.mjs) runs a bundle without Knob Studio
 * and agrees with the app: a bundle exported from a recording of the shipped model (with a
 * temperature calibrator), 48 frames of the embedded test set written as PNGs with shot noise,
 * the consumer's predictions, probabilities and gate against the app's own model, gate, fusion
 * and calibrator on the same images (its image-folder source), within 1e-5 frame by frame. A
 * tampered bundle is refused before anything runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { readArchive, writeArchive } from '../../src-main/core/bundle/bundle-archive';
import { appReadout, EQUIVALENCE_TOLERANCE } from '../../src-main/core/deploy/step-graph-check';
import { loadModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { openSourcePath } from '../../src-main/core/sources/open-source';
import { knob } from '../support/knob-cli';

const FRAMES = 48;
const FPS = 30;
const dir = mkdtempSync(join(tmpdir(), 'knob-deploy-example-'));
const bundle = join(dir, 'tuned.knob.zip');
const framesDir = join(dir, 'frames');
const consumer = (...args: string[]) =>
  spawnSync(process.execPath, ['examples/deploy/node/run-bundle.mjs', ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });

beforeAll(async () => {
  const steps = [
    ['run', '--model', 'default', '--source', 'default', '--limit', '300', '--out', join(dir, 'run')],
    [
      'calibrate',
      '--trace',
      join(dir, 'run', 'trace.arrow'),
      '--method',
      'temperature',
      '--out',
      join(dir, 'settings.json'),
    ],
    [
      'export',
      '--trace',
      join(dir, 'run', 'trace.arrow'),
      '--model',
      'default',
      '--settings',
      join(dir, 'settings.json'),
      '--out',
      bundle,
    ],
    [
      'corrupt',
      '--input',
      'resources/data/t10k-images-idx3-ubyte.gz',
      '--corruption',
      'shot_noise',
      '--severity',
      '3',
      '--limit',
      String(FRAMES),
      '--out-dir',
      framesDir,
      '--format',
      'png',
    ],
  ];
  for (const args of steps) {
    const result = await knob(...args);
    expect(result.status, `knob ${args[0]}: ${result.stderr}`).toBe(0);
  }
}, 180_000);

describe('examples/deploy/node', () => {
  it('prints, frame by frame, what the app computes on the same images', async () => {
    const run = consumer(bundle, framesDir, '--fps', String(FPS));
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { top1: number; label: string; gate: number; probabilities: number[] });
    expect(lines).toHaveLength(FRAMES);

    const { manifest } = await readVerifiedBundle(readFileSync(bundle), bundle);
    const model = await loadModel(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH, executionProviders: ['cpu'] }));
    try {
      const source = await openSourcePath(framesDir, {
        target: manifest.model.input,
        labelNames: null,
        frameRateHz: FPS,
      });
      const frames = new Uint8Array(FRAMES * 784);
      let at = 0;
      for await (const batch of source.batches(FRAMES)) {
        frames.set(batch.frames.subarray(0, batch.count * 784), at * 784);
        at += batch.count;
      }
      expect(at).toBe(FRAMES);
      const check = {
        frames,
        count: FRAMES,
        timestampsSeconds: Float64Array.from({ length: FRAMES }, (_, i) => i / FPS),
        nominalDtSeconds: 1 / FPS,
      };
      const app = await appReadout(model, check, manifest.gate, manifest.calibrator);
      let worst = 0;
      lines.forEach((line, i) => {
        worst = Math.max(worst, Math.abs(line.gate - app.gate[i]!));
        line.probabilities.forEach((p, c) => (worst = Math.max(worst, Math.abs(p - app.probabilities[i * 10 + c]!))));
        expect(line.label).toBe(manifest.model.labels[line.top1]);
      });
      expect(worst).toBeLessThan(EQUIVALENCE_TOLERANCE);
    } finally {
      await model.close();
    }
  }, 60_000);

  it('refuses a tampered bundle before running anything', async () => {
    const members = await readArchive(readFileSync(bundle), bundle);
    const graph = members.get('deploy/step.onnx')!;
    graph[graph.length - 1] = graph[graph.length - 1]! ^ 1;
    const tampered = join(dir, 'tampered.knob.zip');
    writeFileSync(tampered, writeArchive([...members].map(([path, bytes]) => ({ path, bytes }))));
    const run = consumer(tampered, framesDir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/member deploy\/step\.onnx does not match its SHA-256/);
    expect(run.stdout).toBe('');
  });
});
