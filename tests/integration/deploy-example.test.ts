/**
 * The reference consumer (examples/deploy/node/run-bundle.mjs) runs a bundle without Knob Studio
 * and agrees with the app: a bundle exported from a recording of the shipped model (with a
 * temperature calibrator), 48 frames of the embedded test set written as PNGs with shot noise,
 * the consumer's predictions, probabilities and gate against the app's own model, gate, fusion
 * and calibrator on the same images (its image-folder source), within 1e-5 frame by frame. A
 * tampered bundle is refused before anything runs. The same for the Python consumer
 * (examples/deploy/python/run_step_graph.py): its bundle check runs with any python3; its run needs
 * Python onnxruntime and is skipped, saying so, where there is none (as on the build machine).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { readArchive, writeArchive } from '../../src-main/core/files/zip-archive';
import { appReadout, EQUIVALENCE_TOLERANCE, type Readout } from '../../src-main/core/deploy/step-graph-check';
import { loadModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { openSourcePath } from '../../src-main/core/sources/open-source';
import { knob, mixedConditionsRun } from '../support/knob-cli';
import { npyBytes } from '../support/npy-writer';

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

/** The app's own readout of the PNG frames (its image-folder source, model, gate, fusion, calibrator). */
async function appOnFrames(path = bundle) {
  const { manifest } = await readVerifiedBundle(readFileSync(path), path);
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
    return { manifest, check, app: await appReadout(model, check, manifest.gate, manifest.calibrator) };
  } finally {
    await model.close();
  }
}

type ConsumerLine = { top1: number; label?: string; gate: number; probabilities: number[] };

/** The largest difference of a consumer's JSON lines from the app's readout (gate and probabilities). */
function worstAgainstApp(lines: ConsumerLine[], app: Readout): number {
  let worst = 0;
  lines.forEach((line, i) => {
    worst = Math.max(worst, Math.abs(line.gate - app.gate[i]!));
    line.probabilities.forEach((p, c) => (worst = Math.max(worst, Math.abs(p - app.probabilities[i * 10 + c]!))));
  });
  return worst;
}

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ConsumerLine);

/** The bundle with one byte of its step graph flipped. */
async function tamperedBundle(): Promise<string> {
  const members = await readArchive(readFileSync(bundle), bundle);
  const graph = members.get('deploy/step.onnx')!;
  graph[graph.length - 1] = graph[graph.length - 1]! ^ 1;
  const tampered = join(dir, 'tampered.knob.zip');
  writeFileSync(tampered, writeArchive([...members].map(([path, bytes]) => ({ path, bytes }))));
  return tampered;
}

describe('examples/deploy/node', () => {
  it('prints, frame by frame, what the app computes on the same images', async () => {
    const run = consumer(bundle, framesDir, '--fps', String(FPS));
    expect(run.status, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines).toHaveLength(FRAMES);
    const { manifest, app } = await appOnFrames();
    lines.forEach((line) => expect(line.label).toBe(manifest.model.labels[line.top1]));
    expect(worstAgainstApp(lines, app)).toBeLessThan(EQUIVALENCE_TOLERANCE);
  }, 60_000);

  it("carries a condition-aware calibrator's hysteresis state as the app applies it", async () => {
    // a recording of three corruptions with the model's features; the calibrator's hysteresis set on the command line
    const mixed = join(dir, 'mixed');
    await mixedConditionsRun(mixed, 1200);
    const settings = join(dir, 'conditional.json');
    const conditional = join(dir, 'conditional.knob.zip');
    const trace = join(mixed, 'trace.arrow');
    for (const args of [
      ['calibrate', '--trace', trace, '--method', 'conditional', '--condition-hysteresis', '3', '--out', settings],
      ['export', '--trace', trace, '--model', 'default', '--settings', settings, '--out', conditional],
    ]) {
      const result = await knob(...args);
      expect(result.status, `knob ${args[0]}: ${result.stderr}`).toBe(0);
    }
    const run = consumer(conditional, framesDir, '--fps', String(FPS));
    expect(run.status, run.stderr).toBe(0);
    const { manifest, app } = await appOnFrames(conditional);
    expect(manifest.calibrator).toMatchObject({ method: 'conditional', hysteresisFrames: 3 });
    expect(worstAgainstApp(jsonLines(run.stdout), app)).toBeLessThan(EQUIVALENCE_TOLERANCE);
  }, 180_000);

  it('refuses a tampered bundle before running anything', async () => {
    const run = consumer(await tamperedBundle(), framesDir);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/member deploy\/step\.onnx does not match its SHA-256/);
    expect(run.stdout).toBe('');
  });
});

/** The first python3 (Debian's, then PATH's) that imports `modules`, or why none does. */
function pythonWith(modules: string): { path: string | null; why: string } {
  let why = 'no python3 found';
  for (const path of ['/usr/bin/python3', 'python3']) {
    const probe = spawnSync(path, ['-c', `import ${modules}`], { encoding: 'utf8' });
    if (probe.status === 0) return { path, why: '' };
    if (probe.error === undefined) why = `${path}: ${probe.stderr.trim().split('\n').pop()}`;
  }
  return { path: null, why };
}

const PYTHON_CONSUMER = 'examples/deploy/python/run_step_graph.py';

describe('examples/deploy/python', () => {
  it('--check accepts the bundle (version, every SHA-256) and refuses a tampered one', async (context) => {
    const python = pythonWith('hashlib, json, zipfile');
    if (python.path === null) context.skip(`no python3 here (${python.why})`);
    const sound = spawnSync(python.path!, [PYTHON_CONSUMER, bundle, '--check'], { encoding: 'utf8' });
    expect(sound.status, sound.stderr).toBe(0);
    expect(sound.stdout).toMatch(/sound \(\d+ members, step graph deploy\/step\.onnx\)/);
    const tampered = spawnSync(python.path!, [PYTHON_CONSUMER, await tamperedBundle(), '--check'], {
      encoding: 'utf8',
    });
    expect(tampered.status).toBe(1);
    expect(tampered.stderr).toMatch(/member deploy\/step\.onnx does not match its SHA-256/);
  });

  it('runs the step graph in Python onnxruntime and prints what the app computes', async (context) => {
    const python = pythonWith('numpy, onnxruntime');
    if (python.path === null)
      context.skip(
        `Python onnxruntime is not installed here (Debian 12 packages none; PyPI is out of reach): ${python.why}`,
      );
    const { check, app } = await appOnFrames();
    const framesNpy = join(dir, 'frames.npy');
    const timesNpy = join(dir, 'timestamps.npy');
    writeFileSync(framesNpy, npyBytes(check.frames, [FRAMES, 28, 28, 1]));
    writeFileSync(timesNpy, npyBytes(check.timestampsSeconds, [FRAMES]));
    const run = spawnSync(python.path!, [PYTHON_CONSUMER, bundle, framesNpy, timesNpy], {
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = jsonLines(run.stdout);
    expect(lines).toHaveLength(FRAMES);
    expect(worstAgainstApp(lines, app)).toBeLessThan(EQUIVALENCE_TOLERANCE);
  }, 60_000);
});
