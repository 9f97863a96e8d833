import type { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import type { ExecutionProviderName, ModelOptions } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import { framesToTensorInto, tensorMap, tensorShape } from '../../../src-shared/frames/frame-to-tensor';
import { DEFAULT_GATE_SETTINGS } from '../../../src-shared/gate/gate-settings';
import { type LatencySummary } from '../../../src-shared/metrics/latency-percentiles';
import { replay } from '../../../src-shared/trace/replay';
import { readUserFile } from '../files/user-files';
import { createSessionOnFirstProvider } from '../inference/execution-providers';
import { cpuSessionLayout, type SessionLayout } from '../inference/session-layout';
import { startEntryWorker } from '../workers/entry-worker';
import type { FromBareSession, ToBareSession } from './bare-session-worker';
import { InferenceClient } from '../inference/inference-client';
import { openSourcePath } from '../sources/open-source';
import { batchFramesFor } from '../inference/batch-size';
import { createFramePreparer } from '../../../src-shared/frames/prepare-frames';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { allocateBatchMetadata } from '../../../src-shared/trace/trace-builder';
import type { FrameSource } from '../sources/frame-source';
import { livePipelineOnNewRecording } from './live-pipeline';
import { runOffline } from './offline-run';
import type { LatencyReport } from './latency-recorder';
import { unknownProvenance } from '../report/provenance';

/**
 * The engine's performance figures, measured in one run for one model, batch size and provider:
 *  1. bare onnxruntime-node throughput: session.run on a ready float tensor, in this process;
 *  2. the engine's offline throughput: embedded source -> preparation -> inference process ->
 *     trace -> gate + fusion, end to end; and their ratio (target >= 0.95); beside it, bare
 *     sessions in the inference process's own layout (session-layout.ts), so the ratio to those
 *     shows the engine's own cost;
 *  3. gate + fusion cost per frame (second-order ZOH replay of the run's trace) as a fraction of the
 *     bare inference time per frame (target <= 1 %);
 *  4. the live path: frames submitted at `liveFps` for `liveSeconds`, as many in flight as the
 *     inference process runs at once, latest wins; end-to-end latency from submission to fused
 *     output (target p95 < 10 ms, nothing dropped);
 *  5. the live path at the rate the machine allows: each frame submitted as soon as the pipeline
 *     accepts it (as a file source does), once with one frame in flight and once with the engine's
 *     default, so the frames per second that every core buys are printed beside bare inference.
 * Figures are printed, never judged against a wall-time threshold here.
 */
export interface EngineBenchOptions {
  model: ModelOptions;
  /** The frames streamed: a dataset, folder or video path, or 'default' (the embedded test set). */
  source?: string;
  /** Frames a batch; default: as many as the model's input size allows (batch-size.ts). */
  batchSize?: number;
  /** Frames each measurement streams; default: about ROUND_SECONDS of bare inference (see framesForRounds). */
  frames?: number;
  liveSeconds: number;
  liveFps: number;
  /** Alternating bare / engine measurements; medians are reported (the CLI's default is 7: this machine's throughput drifts by tens of percent between seconds). */
  rounds: number;
  onProgress?: (stage: string) => void;
}

export interface EngineBenchReport {
  model: string;
  /** The frames streamed, in words, and how the batch was chosen. */
  source: string;
  batch: string;
  executionProvider: string;
  skippedProviders: Array<{ name: string; reason: string }>;
  batchSize: number;
  frames: number;
  /** How `frames` was chosen, in words. */
  framesChosen: string;
  rounds: number;
  bare: { framesPerSecond: number; inferenceMsPerFrame: number; rounds: number[] };
  /** Bare sessions laid out as the engine's (several sessions, batches at once): the like-for-like figure. */
  bareEngineLayout: { framesPerSecond: number; sessions: number; threadsPerSession: number; rounds: number[] };
  engine: { framesPerSecond: number; latencyPerFrame: LatencyReport; rounds: number[] };
  engineToBareRatio: number;
  engineToBareEngineLayoutRatio: number;
  gateFusion: { nsPerFrame: number; fractionOfInference: number };
  live: {
    fps: number;
    seconds: number;
    submitted: number;
    processed: number;
    dropped: number;
    endToEnd: LatencySummary | null;
    inference: LatencySummary | null;
    /** Why the first dropped frame was dropped, when one was. */
    firstError: string | null;
  };
  /** Step 5: one frame in flight, then the engine's default; frames per second over `frames` frames. */
  liveFullRate: LiveFullRate[];
}

export interface LiveFullRate {
  framesInFlight: number;
  frames: number;
  framesPerSecond: number;
  /** Submission to fused output, including the wait behind the frames in flight. */
  endToEnd: LatencySummary | null;
}

/** Seconds of bare inference a measurement aims at when --frames is not given. */
const ROUND_SECONDS = 2;
/** The most frames a default measurement streams (the 28 x 28 model's figures were taken at 10,240). */
const MAX_DEFAULT_FRAMES = 10240;
/** The most bytes of prepared frames the live path holds to replay (a 224 x 224 x 3 model: 1,783 frames). */
const LIVE_FRAME_BYTES = 256 * 1024 * 1024;

/** `frames` as a count of whole batches, at least one. */
const wholeBatches = (frames: number, batchSize: number): number => Math.max(1, Math.round(frames / batchSize));

/**
 * Whole batches streamed by each measurement: `given` frames, or, by default, about ROUND_SECONDS
 * of bare inference at the throughput of the warm-up (a 224 x 224 model at 70 frames a second
 * streams about 140 frames where 10,240 took each of the 7 rounds' three passes 2.5 minutes),
 * never fewer than two batches nor more than MAX_DEFAULT_FRAMES.
 */
function framesForRounds(
  given: number | undefined,
  batchSize: number,
  warmUpFramesPerSecond: number,
): { batches: number; reason: string } {
  if (given !== undefined)
    return { batches: wholeBatches(given, batchSize), reason: `${given} frames asked (--frames)` };
  const wanted = Math.min(MAX_DEFAULT_FRAMES, warmUpFramesPerSecond * ROUND_SECONDS);
  const batches = Math.max(2, Math.round(wanted / batchSize));
  return {
    batches,
    reason: `about ${ROUND_SECONDS} s of bare inference at the warm-up's ${warmUpFramesPerSecond.toFixed(0)} frames/s (at most ${MAX_DEFAULT_FRAMES}; --frames sets it)`,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Bare sessions in the engine's layout, one worker thread each, running their share of `batches` at
 * once (session i takes batches i, i + n, ...).
 */
async function openBareSessions(
  modelBytes: Uint8Array,
  source: string,
  provider: ExecutionProviderName,
  layout: SessionLayout,
  shape: number[],
  tensors: Float32Array[],
): Promise<{ run(batches: number): Promise<void>; close(): Promise<void> }> {
  const workers = Array.from({ length: layout.sessions }, () =>
    startEntryWorker(import.meta.url, 'bare-session-worker'),
  );
  const call = (worker: Worker, message: ToBareSession): Promise<void> =>
    new Promise((resolve, reject) => {
      worker.once('message', (reply: FromBareSession) =>
        reply.type === 'failed' ? reject(new KnobError(reply.error.code, reply.error.message)) : resolve(),
      );
      worker.postMessage(message);
    });
  const threads = layout.threadsPerSession;
  await Promise.all(
    workers.map((worker) =>
      call(worker, { type: 'open', modelBytes, source, provider, intraOpThreads: threads, shape, tensors }),
    ),
  );
  return {
    run: async (batches) => {
      await Promise.all(
        workers.map((worker, i) =>
          call(worker, { type: 'run', batches: Math.ceil((batches - i) / workers.length), first: i }),
        ),
      );
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

async function firstBatch(source: FrameSource, count: number): Promise<Uint8Array> {
  for await (const batch of source.batches(count)) {
    if (batch.count < count)
      throw new KnobError('INVALID_INPUT', `the bench needs ${count} frames of its source, which has ${batch.count}`);
    return batch.frames;
  }
  throw new KnobError('INVALID_INPUT', 'the bench source has no frames');
}

/** `count` source frames fitted to the model's input (no corruption). */
function fitted(frames: Uint8Array, source: FrameSource, spec: InputSpec, count: number): Uint8Array {
  const { width, height, channels } = source.info;
  const target = { width: spec.width, height: spec.height, channels: spec.channels };
  const out = new Uint8Array(count * spec.width * spec.height * spec.channels);
  const preparer = createFramePreparer(target, { kind: 'none' }, 0);
  preparer.prepare(frames, { width, height, channels }, count, 0, 0, out, allocateBatchMetadata(count));
  return out;
}

export async function benchEngine(options: EngineBenchOptions): Promise<EngineBenchReport> {
  const client = await InferenceClient.start(options.model);
  try {
    const model = client.description;
    const spec = model.input;
    const source = await openSourcePath(options.source ?? 'default', {
      target: spec,
      labelNames: model.labelNames,
    });
    const chosen = options.batchSize === undefined ? batchFramesFor(spec) : null;
    const batchSize = options.batchSize ?? chosen!.frames;

    // 1. Bare onnxruntime-node on the provider the engine got, same session options.
    const bytes = await readUserFile(model.paths[0], 'model');
    const bare = await createSessionOnFirstProvider(bytes, model.paths[0], [model.executionProvider]);
    // Distinct real batches (the first `distinct` of the stream), each in its own tensor, so bare
    // inference pays the same memory traffic as the engine rather than rerunning one cached input.
    const distinct = options.frames === undefined ? 2 : Math.min(wholeBatches(options.frames, batchSize), 8);
    // fitted to the model's input as the engine fits them (prepare-frames.ts), so any source serves
    const firstFrames = fitted(await firstBatch(source, distinct * batchSize), source, spec, distinct * batchSize);
    const frameValues = spec.width * spec.height * spec.channels;
    const map = tensorMap(spec);
    const feedsList = Array.from({ length: distinct }, (_, b) => {
      const data = new Float32Array(batchSize * frameValues);
      framesToTensorInto(firstFrames.subarray(b * batchSize * frameValues), batchSize, spec, map, data);
      return { [bare.session.inputNames[0]]: new ort.Tensor('float32', data, tensorShape(spec, batchSize)) };
    });
    const feeds = feedsList[0];
    await bare.session.run(feeds);
    const warmUpStarted = performance.now();
    for (let i = 0; i < 2; i++) await bare.session.run(feeds);
    const warmUpFps = (2 * batchSize * 1000) / (performance.now() - warmUpStarted);
    const planned = framesForRounds(options.frames, batchSize, warmUpFps);
    const batches = planned.batches;
    const frames = batches * batchSize;
    // The inference process's layout: on other providers one session, with the CPU layout's threads.
    const cpuLayout = cpuSessionLayout();
    const layout = model.executionProvider === 'cpu' ? cpuLayout : { ...cpuLayout, sessions: 1 };
    const laidOut = await openBareSessions(
      bytes,
      model.paths[0],
      model.executionProvider,
      layout,
      tensorShape(spec, batchSize),
      feedsList.map((f) => f[bare.session.inputNames[0]].data as Float32Array),
    );

    // 2. The engine, end to end, after a warm-up. This machine's timings drift by tens of percent
    // between seconds, so bare and engine alternate over `rounds` and the medians are compared.
    const run = {
      client,
      source,
      schedule: { kind: 'none' as const },
      streamSeed: 0,
      settings: DEFAULT_GATE_SETTINGS,
      batchSize,
    };
    const bareFps: number[] = [];
    const laidOutFps: number[] = [];
    const engineFps: number[] = [];
    let offline: Awaited<ReturnType<typeof runOffline>> | null = null;
    try {
      await runOffline({ ...run, maxFrames: batchSize * 2 });
      for (let round = 0; round < options.rounds; round++) {
        options.onProgress?.(`round ${round + 1} of ${options.rounds}: bare onnxruntime-node, then the engine`);
        const bareStarted = performance.now();
        for (let i = 0; i < batches; i++) await bare.session.run(feedsList[i % distinct]);
        bareFps.push((frames / (performance.now() - bareStarted)) * 1000);
        const laidOutStarted = performance.now();
        await laidOut.run(batches);
        laidOutFps.push((frames / (performance.now() - laidOutStarted)) * 1000);
        offline = await runOffline({ ...run, maxFrames: frames });
        if (offline.error !== null) throw new KnobError(offline.error.code, offline.error.message);
        engineFps.push((offline.framesProcessed / offline.wallMs) * 1000);
      }
    } finally {
      await laidOut.close();
    }
    await bare.session.release();
    const bareMedian = median(bareFps);
    const engineMedian = median(engineFps);
    const inferenceMsPerFrame = 1000 / bareMedian;
    if (offline === null) throw new KnobError('INVALID_INPUT', 'no bench rounds');

    // 3. Gate + fusion per frame on that trace.
    options.onProgress?.('gate + fusion');
    for (let i = 0; i < 3; i++) replay(offline.trace, DEFAULT_GATE_SETTINGS);
    const reps = 20;
    const gateStarted = performance.now();
    for (let i = 0; i < reps; i++) replay(offline.trace, DEFAULT_GATE_SETTINGS);
    const gateMsPerFrame = (performance.now() - gateStarted) / (reps * offline.framesProcessed);

    // 4. The live path at liveFps.
    options.onProgress?.(`live ${options.liveFps} fps for ${options.liveSeconds} s`);
    // the live path gets the source's own frames, fitted to the model's input as a camera's are
    const geometry = { width: source.info.width, height: source.info.height, channels: source.info.channels };
    const frameBytes = geometry.width * geometry.height * geometry.channels;
    const total = Math.round(options.liveSeconds * options.liveFps);
    const liveFrames = Math.min(
      source.info.frameCount ?? 10000,
      10000,
      total,
      Math.floor(LIVE_FRAME_BYTES / frameBytes),
    );
    const all = await firstBatch(source, Math.max(1, liveFrames));
    const available = all.length / frameBytes;
    let firstError: string | null = null;
    const session = livePipelineOnNewRecording({
      client,
      description: 'live bench',
      provenance: unknownProvenance('live bench', 'benchmark'),
      frameRateHz: options.liveFps,
      onError: (error) => (firstError ??= `${error.code}: ${error.message}`),
    });
    const periodMs = 1000 / options.liveFps;
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const due = started + i * periodMs;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const at = (i % available) * frameBytes;
      session.submit(all.subarray(at, at + frameBytes), geometry, i / options.liveFps);
    }
    await session.idle();
    const liveLatency = session.latencyReport();
    session.close();

    // 5. The live path as fast as it goes, with one frame in flight and with the default.
    options.onProgress?.('live at the rate the machine allows');
    const liveFullRate: LiveFullRate[] = [];
    for (const framesInFlight of [1, model.concurrentRuns]) {
      const pipeline = livePipelineOnNewRecording({
        client,
        description: 'live bench, full rate',
        provenance: unknownProvenance('live bench', 'benchmark'),
        frameRateHz: options.liveFps,
        framesInFlight,
      });
      const fullRateStarted = performance.now();
      for (let i = 0; i < frames; i++) {
        await pipeline.whenAccepting();
        const at = (i % available) * frameBytes;
        pipeline.submit(all.subarray(at, at + frameBytes), geometry, i / options.liveFps);
      }
      await pipeline.idle();
      const elapsedMs = performance.now() - fullRateStarted;
      liveFullRate.push({
        framesInFlight: pipeline.framesInFlight,
        frames: pipeline.recording.frameCount,
        framesPerSecond: (pipeline.recording.frameCount / elapsedMs) * 1000,
        endToEnd: pipeline.latencyReport().total,
      });
      pipeline.close();
    }
    return {
      model: model.paths.join(' + '),
      executionProvider: model.executionProvider,
      skippedProviders: model.skippedProviders,
      source: source.info.description,
      batch: chosen?.reason ?? `${batchSize} frames a batch (given)`,
      batchSize,
      frames,
      framesChosen: planned.reason,
      rounds: options.rounds,
      bare: { framesPerSecond: bareMedian, inferenceMsPerFrame, rounds: bareFps },
      bareEngineLayout: {
        framesPerSecond: median(laidOutFps),
        sessions: layout.sessions,
        threadsPerSession: layout.threadsPerSession,
        rounds: laidOutFps,
      },
      engine: { framesPerSecond: engineMedian, latencyPerFrame: offline.latencyPerFrame, rounds: engineFps },
      engineToBareRatio: engineMedian / bareMedian,
      engineToBareEngineLayoutRatio: engineMedian / median(laidOutFps),
      gateFusion: { nsPerFrame: gateMsPerFrame * 1e6, fractionOfInference: gateMsPerFrame / inferenceMsPerFrame },
      live: {
        fps: options.liveFps,
        seconds: options.liveSeconds,
        submitted: total,
        processed: session.recording.frameCount,
        dropped: session.recording.framesDropped,
        endToEnd: liveLatency.total,
        inference: liveLatency.inference,
        firstError,
      },
      liveFullRate,
    };
  } finally {
    await client.close();
  }
}
