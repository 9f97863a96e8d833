/**
 * The inference engine on real ONNX files through onnxruntime-node (CPU), in its own process:
 * the three model contracts (the shipped Knob model; linear classifiers the tests build), where
 * preprocessing and labels came from, provider fallback reporting, crash recovery with the gate
 * state intact, and live stepping equal to batch replay bit for bit.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema, type ModelOptionsInput } from '../../src-shared/api/model-options';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { replay } from '../../src-shared/trace/replay';
import { FASHION_MNIST_LABELS } from '../../src-main/core/datasets/embedded-dataset';
import { InferenceClient } from '../../src-main/core/inference/inference-client';
import { cpuSessionLayout } from '../../src-main/core/inference/session-layout';
import { livePipelineOnNewRecording } from '../../src-main/core/engine/live-pipeline';
import { runOffline } from '../../src-main/core/engine/offline-run';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { openSourcePath } from '../../src-main/core/sources/open-source';
import { unknownProvenance } from '../../src-main/core/report/provenance';
import { classMeanWeights, linearClassifier, linearLogits } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';

const dir = mkdtempSync(join(tmpdir(), 'knob-engine-'));
const sample = fashionMnistSample(3000);
// Two different real classifiers: class means of disjoint halves of the sample, at different scales.
const branchA = classMeanWeights(sample.images.slice(1000, 2000), sample.labels.slice(1000, 2000), 10, 4);
const branchB = classMeanWeights(sample.images.slice(2000, 3000), sample.labels.slice(2000, 3000), 10, 12);
const classifierPath = join(dir, 'classifier.onnx');
const secondPath = join(dir, 'second.onnx');
const sidecarModelPath = join(dir, 'with-sidecar.onnx');
const clients: InferenceClient[] = [];

async function start(options: ModelOptionsInput): Promise<InferenceClient> {
  const client = await InferenceClient.start(ModelOptionsSchema.parse(options));
  clients.push(client);
  return client;
}

function frames(from: number, count: number): Uint8Array {
  const out = new Uint8Array(count * 784);
  for (let i = 0; i < count; i++) out.set(sample.images[from + i], i * 784);
  return out;
}

function softmax(z: ArrayLike<number>): number[] {
  const max = Math.max(...Array.from(z));
  const e = Array.from(z, (v) => Math.exp(v - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

beforeAll(() => {
  writeFileSync(classifierPath, linearClassifier(branchA));
  writeFileSync(secondPath, linearClassifier({ ...branchB, inputName: 'pixels', outputName: 'scores' }));
  writeFileSync(sidecarModelPath, linearClassifier(branchA));
  writeFileSync(
    join(dir, 'with-sidecar.knob.json'),
    JSON.stringify({
      labels: FASHION_MNIST_LABELS,
      t0: 3,
      certaintyRule: 'margin',
      input: {
        name: 'x',
        layout: 'NCHW',
        width: 28,
        height: 28,
        channels: 1,
        value_range: [0, 1],
        mean: [0],
        std: [1],
      },
    }),
  );
});
afterAll(async () => {
  for (const client of clients) await client.close();
});

describe('model contracts', () => {
  it('Knob-native: the shipped model, detected, preprocessing and labels from its metadata, CPU chosen and the rest reported', async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    const d = client.description;
    expect(d).toMatchObject({
      contract: 'knob-native',
      contractSource: 'detected',
      inputSource: 'metadata',
      labelsSource: 'metadata',
      classCount: 10,
      executionProvider: 'cpu',
      adapter: null,
    });
    expect(d.labelNames).toEqual(FASHION_MNIST_LABELS);
    // Every provider tried before CPU on this platform is reported with its reason.
    expect(d.skippedProviders.map((s) => s.name)).toEqual(
      process.platform === 'linux' ? ['cuda', 'webgpu'] : expect.any(Array),
    );
    for (const skipped of d.skippedProviders) expect(skipped.reason.length).toBeGreaterThan(10);
    const out = await client.run(frames(0, 8), 8, 0);
    expect(out.zStatic).toHaveLength(80);
    expect(out.zDyn).toHaveLength(80);
    expect(out.uRef).toHaveLength(8);
    expect(out.roundTripMs).toBeGreaterThan(0);
  });

  it('a single classifier through the adapter: z_dyn = z, z_static = z / T0, u* = 1 - H(p) / ln K; spec from the input shape', async () => {
    const client = await start({ path: classifierPath });
    const d = client.description;
    expect(d).toMatchObject({
      contract: 'single-classifier',
      contractSource: 'detected',
      inputSource: 'input-shape',
      labelsSource: 'generated',
      adapter: { t0: 2, certaintyRule: 'entropy' },
    });
    expect(d.labelNames[3]).toBe('class 3');
    const out = await client.run(frames(0, 16), 16, 0);
    for (let i = 0; i < 16; i++) {
      const reference = linearLogits(sample.images[i], branchA.weights, branchA.bias);
      for (let k = 0; k < 10; k++) {
        expect(out.zDyn[i * 10 + k]).toBeCloseTo(reference[k], 3);
        expect(out.zStatic[i * 10 + k]).toBe(Math.fround(out.zDyn[i * 10 + k] / 2));
      }
      const p = softmax(out.zDyn.subarray(i * 10, i * 10 + 10));
      const entropy = -p.reduce((s, v) => s + (v > 0 ? v * Math.log(v) : 0), 0);
      expect(out.uRef[i]).toBeCloseTo(1 - entropy / Math.log(10), 6);
    }
  });

  it('a sidecar gives labels, preprocessing and adapter defaults; explicit settings win over it', async () => {
    const fromSidecar = await start({ path: sidecarModelPath });
    expect(fromSidecar.description).toMatchObject({
      inputSource: 'sidecar',
      labelsSource: 'sidecar',
      adapter: { t0: 3, certaintyRule: 'margin' },
    });
    expect(fromSidecar.description.labelNames).toEqual(FASHION_MNIST_LABELS);
    const out = await fromSidecar.run(frames(0, 4), 4, 0);
    for (let i = 0; i < 4; i++) {
      const p = softmax(out.zDyn.subarray(i * 10, i * 10 + 10)).sort((a, b) => b - a);
      expect(out.uRef[i]).toBeCloseTo(p[0] - p[1], 6);
    }
    const explicit = await start({
      path: sidecarModelPath,
      t0: 5,
      labels: Array.from({ length: 10 }, (_, k) => `c${k}`),
    });
    expect(explicit.description).toMatchObject({
      labelsSource: 'explicit',
      adapter: { t0: 5, certaintyRule: 'margin' },
    });
  });

  it('two classifier files as the branches: u* = 1 - total variation between their softmax outputs', async () => {
    const client = await start({ path: classifierPath, secondPath });
    expect(client.description).toMatchObject({ contract: 'two-classifiers', paths: [classifierPath, secondPath] });
    const out = await client.run(frames(100, 12), 12, 100);
    let disagreements = 0;
    for (let i = 0; i < 12; i++) {
      const a = linearLogits(sample.images[100 + i], branchA.weights, branchA.bias);
      const b = linearLogits(sample.images[100 + i], branchB.weights, branchB.bias);
      for (let k = 0; k < 10; k++) {
        expect(out.zStatic[i * 10 + k]).toBeCloseTo(a[k], 3);
        expect(out.zDyn[i * 10 + k]).toBeCloseTo(b[k], 3);
      }
      const pa = softmax(out.zStatic.subarray(i * 10, i * 10 + 10));
      const pb = softmax(out.zDyn.subarray(i * 10, i * 10 + 10));
      const tv = pa.reduce((s, v, k) => s + Math.abs(v - pb[k]), 0) / 2;
      expect(out.uRef[i]).toBeCloseTo(1 - tv, 6);
      if (tv > 0.2) disagreements++;
    }
    expect(disagreements).toBeGreaterThan(0); // the branches genuinely differ
  });

  it('a requested contract overrides detection', async () => {
    const client = await start({ path: classifierPath, contract: 'single-classifier', certaintyRule: 'margin' });
    expect(client.description).toMatchObject({
      contract: 'single-classifier',
      contractSource: 'requested',
      adapter: { certaintyRule: 'margin' },
    });
  });
});

describe('the built app', () => {
  it('the electron-vite build ships the inference process as its own entry, and it finds resources/ from out/main', async () => {
    const { fork } = await import('node:child_process');
    const child = fork('out/main/inference-process.js', [], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    // the process says it serves before anything else (src-main/core/workers/worker-protocol.ts)
    const ready = await new Promise((resolve) => child.once('message', resolve));
    expect(ready).toEqual({ ready: true });
    // requests in the worker protocol's envelope
    const reply = await new Promise<{ id: number; result?: { contract: string; labelNames: string[] } }>((resolve) => {
      child.once('message', (message) => resolve(message as never));
      child.send({ id: 1, request: { kind: 'load', options: ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH }) } });
    });
    // A batch through the built worker threads that own the sessions (out/main/inference-worker.js).
    const result = await new Promise<{ id: number; result?: { zStatic: Float32Array } }>((resolve) => {
      child.once('message', (message) => resolve(message as never));
      child.send({ id: 7, request: { kind: 'run', frames: new Uint8Array(3 * 784), count: 3, firstFrame: 0 } });
    });
    child.kill();
    expect(reply.id).toBe(1);
    expect(reply.result?.contract).toBe('knob-native');
    expect(reply.result?.labelNames).toEqual(FASHION_MNIST_LABELS);
    expect(result.id).toBe(7);
    expect(result.result?.zStatic.length).toBe(30);
  });
});

describe('the CPU session layout', () => {
  it('two batches at once from two cores up, each session with its share of the cores', () => {
    expect(cpuSessionLayout(1)).toEqual({ sessions: 1, threadsPerSession: 1 });
    expect(cpuSessionLayout(2)).toEqual({ sessions: 2, threadsPerSession: 1 });
    expect(cpuSessionLayout(3)).toEqual({ sessions: 2, threadsPerSession: 1 });
    expect(cpuSessionLayout(16)).toEqual({ sessions: 2, threadsPerSession: 8 });
  });
});

describe('the built metrics worker', () => {
  it('out/main/metrics-worker.js computes a snapshot off the main thread, equal to the in-process one', async () => {
    const { Worker } = await import('node:worker_threads');
    const { syntheticTrace } = await import('../support/synthetic-trace');
    const { metricsSnapshot } = await import('../../src-main/core/use-cases/metrics-snapshot');
    const { plainSource } = await import('../../src-main/core/use-cases/view-replay');
    const trace = syntheticTrace({ frames: 500, classCount: 10, seed: 3 });
    const worker = new Worker('./out/main/metrics-worker.js');
    // requests in the worker protocol's envelope (src-main/core/workers/worker-protocol.ts): the
    // recording first (the worker holds it), then the snapshot of it
    const replies: Array<{
      id: number;
      result?: { result: { kind: string; snapshot: { values: Array<{ identity: string; value: number | null }> } } };
    }> = [];
    const reply = await new Promise<(typeof replies)[number]>((resolve) => {
      worker.on('message', (message: (typeof replies)[number]) => {
        replies.push(message);
        if (message.id === 7) resolve(message);
      });
      worker.postMessage({ id: 6, request: { kind: 'rows', rows: { recordingId: 1, kind: 'whole', trace } } });
      worker.postMessage({
        id: 7,
        request: {
          kind: 'snapshot',
          settings: DEFAULT_GATE_SETTINGS,
          version: 0,
          recordingId: 1,
          calibrator: null,
          options: { groupBy: 'none', detail: 'full' },
        },
      });
    });
    await worker.terminate();
    expect(reply.id).toBe(7);
    const local = metricsSnapshot(plainSource(trace), DEFAULT_GATE_SETTINGS, {
      version: 0,
      recordingId: 1,
      calibrator: null,
    });
    expect(reply.result?.result.snapshot.values).toEqual(local.values);
  });
});

describe('the engine', () => {
  it('an offline run of the shipped model equals a replay of its trace bit for bit, and keeps source metadata', async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    const source = await openSourcePath('default', {
      target: client.description.input,
      labelNames: client.description.labelNames,
    });
    const result = await runOffline({
      client,
      source,
      schedule: {
        kind: 'step',
        corruption: 'gaussian_noise',
        levels: [
          { atFrame: 0, severity: 0 },
          { atFrame: 300, severity: 5 },
        ],
      },
      streamSeed: 7,
      settings: DEFAULT_GATE_SETTINGS,
      batchSize: 128,
      maxFrames: 600,
    });
    expect(result.error).toBeNull();
    expect(result.framesProcessed).toBe(600);
    const again = replay(result.trace, DEFAULT_GATE_SETTINGS);
    expect(Array.from(again.g)).toEqual(Array.from(result.output.g));
    expect(Array.from(again.top1)).toEqual(Array.from(result.output.top1));
    expect(Array.from(again.confidence)).toEqual(Array.from(result.output.confidence));
    const severity = result.trace.metadata.severity;
    expect(severity.kind === 'number' && severity.values[299] === 0 && severity.values[300] === 5).toBe(true);
    // The gate responds to the step: mean u* drops under heavy noise.
    const mean = (from: number, to: number) =>
      result.trace.uRef.subarray(from, to).reduce((a, b) => a + b, 0) / (to - from);
    expect(mean(300, 600)).toBeLessThan(mean(0, 300) - 0.1);
    for (const stage of ['preprocess', 'inference', 'gateFusion', 'total'] as const)
      expect(result.latencyPerFrame[stage]!.p95Ms).toBeGreaterThan(0);
  });

  it("live stepping with a mid-stream knob change records each frame's settings version; the recorded trace replays to the same outputs", async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    const updates: number[] = [];
    const session = livePipelineOnNewRecording({
      client,
      description: 'test',
      provenance: unknownProvenance('test frames', 'test'),
      frameRateHz: 30,
      onUpdate: (u) => updates.push(u.frame),
    });
    const recording = session.recording;
    for (let i = 0; i < 60; i++) {
      session.submit(sample.images[i], { width: 28, height: 28, channels: 1 }, i / 30, sample.labels[i]);
      await session.idle();
      if (i === 29) session.setSettings({ ...DEFAULT_GATE_SETTINGS, zeta: 0.3 }, 1);
    }
    await new Promise((r) => setTimeout(r, 50));
    const { trace, output: out } = recording.copy();
    expect(Array.from(out.settingsVersion.subarray(29, 32))).toEqual([0, 1, 1]);
    // Frames 0..29 at version 0 equal a replay of those frames with the first setting.
    const first = replay({ ...trace, frameCount: 30 }, DEFAULT_GATE_SETTINGS);
    expect(Array.from(first.g)).toEqual(Array.from(out.g.subarray(0, 30)));
    expect(updates.length).toBeGreaterThan(0);
    expect(updates.length).toBeLessThanOrEqual(60);
    session.close();
  });

  it('live with a frame in flight on every session: frames appended in submission order, equal bit for bit to one at a time', async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    // the process runs as many batches at once as the CPU layout has sessions (one per core pair)
    expect(client.description.concurrentRuns).toBe(cpuSessionLayout().sessions);
    const schedule = {
      kind: 'step' as const,
      corruption: 'gaussian_noise' as const,
      levels: [
        { atFrame: 0, severity: 0 },
        { atFrame: 40, severity: 4 },
      ],
    };
    const runWith = async (framesInFlight: number) => {
      const pipeline = livePipelineOnNewRecording({
        client,
        description: 'test',
        provenance: unknownProvenance('test frames', 'test'),
        frameRateHz: 30,
        schedule,
        streamSeed: 3,
        framesInFlight,
      });
      for (let i = 0; i < 80; i++) {
        await pipeline.whenAccepting();
        pipeline.submit(sample.images[i], { width: 28, height: 28, channels: 1 }, i / 30, sample.labels[i]);
        if (i === 59) pipeline.setSettings({ ...DEFAULT_GATE_SETTINGS, zeta: 0.4 }, 1);
      }
      await pipeline.idle();
      const peak = pipeline.peakFramesInFlight;
      const copy = pipeline.recording.copy();
      pipeline.close();
      return { peak, dropped: pipeline.recording.framesDropped, ...copy };
    };
    const one = await runWith(1);
    const many = await runWith(2);
    expect(one.peak).toBe(1);
    expect(many.peak).toBe(2);
    expect([one.dropped, many.dropped]).toEqual([0, 0]);
    expect(many.trace.frameCount).toBe(80);
    expect(Array.from(many.trace.labels!)).toEqual(sample.labels.slice(0, 80));
    expect(Array.from(many.trace.timestampsSeconds)).toEqual(Array.from(one.trace.timestampsSeconds));
    expect(Array.from(many.trace.zStatic)).toEqual(Array.from(one.trace.zStatic));
    expect(Array.from(many.trace.uRef)).toEqual(Array.from(one.trace.uRef));
    const severity = many.trace.metadata.severity;
    expect(severity.kind === 'number' && severity.values[39] === 0 && severity.values[40] === 4).toBe(true);
    // the knob change staged after frame 59 was submitted takes effect at the next gate step, on a
    // frame still in flight or waiting then (at most the two in flight and the one waiting before)
    const changedAt = (r: typeof one) => Array.from(r.output.settingsVersion).indexOf(1);
    const firstChanged = changedAt(many);
    expect(firstChanged).toBeGreaterThanOrEqual(57);
    expect(firstChanged).toBeLessThanOrEqual(60);
    const common = Math.min(firstChanged, changedAt(one));
    expect(Array.from(many.output.g.subarray(0, common))).toEqual(Array.from(one.output.g.subarray(0, common)));
    const replayed = replay({ ...many.trace, frameCount: firstChanged }, DEFAULT_GATE_SETTINGS);
    expect(Array.from(replayed.g)).toEqual(Array.from(many.output.g.subarray(0, firstChanged)));
  });

  it('the inference process killed mid-stream: a typed error, a restart with backoff, and the stream resumes with its gate state', async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    const errors: string[] = [];
    const session = livePipelineOnNewRecording({
      client,
      description: 'test',
      provenance: unknownProvenance('test frames', 'test'),
      frameRateHz: 30,
      onError: (e) => errors.push(e.code),
    });
    const recording = session.recording;
    const firstPid = client.pid;
    for (let i = 0; i < 120; i++) {
      if (i === 50) process.kill(client.pid!, 'SIGKILL');
      session.submit(sample.images[i], { width: 28, height: 28, channels: 1 }, i / 30, sample.labels[i]);
      await new Promise((r) => setTimeout(r, 8));
    }
    await session.idle();
    // Frames submitted during the restart wait for it (latest wins); the rest continue.
    for (let i = 120; i < 150; i++) {
      session.submit(sample.images[i], { width: 28, height: 28, channels: 1 }, i / 30, sample.labels[i]);
      await session.idle();
    }
    expect(errors).toContain('INFERENCE_CRASHED');
    expect(client.restarts).toBe(1);
    expect(client.pid).not.toBe(firstPid);
    const { trace, output: live } = recording.copy();
    expect(trace.frameCount + recording.framesDropped).toBe(150);
    expect(trace.frameCount).toBeGreaterThan(80);
    // Continuity: one replay over every recorded frame, from rest only at the start, reproduces the
    // live gate exactly, so the state was carried across the crash (a reset would break equality).
    const replayed = replay(trace, DEFAULT_GATE_SETTINGS);
    expect(Array.from(replayed.g)).toEqual(Array.from(live.g));
    expect(Array.from(replayed.v)).toEqual(Array.from(live.v));
    session.close();
  });

  it('an offline run survives a crash of the inference process: the lost batch is sent again after the restart', async () => {
    const client = await start({ path: DEFAULT_MODEL_PATH });
    const source = await openSourcePath('default', { target: client.description.input });
    let crashed = false;
    const result = await runOffline({
      client,
      source,
      schedule: { kind: 'none' },
      streamSeed: 0,
      settings: DEFAULT_GATE_SETTINGS,
      batchSize: 100,
      maxFrames: 1000,
      onProgress: (done) => {
        if (!crashed && done >= 300) {
          crashed = true;
          client.simulateCrash();
        }
      },
    });
    expect(result.error).toBeNull();
    expect(result.restarts).toBe(1);
    expect(result.framesProcessed).toBe(1000);
    expect(Array.from(replay(result.trace, DEFAULT_GATE_SETTINGS).g)).toEqual(Array.from(result.output.g));
  });
});
