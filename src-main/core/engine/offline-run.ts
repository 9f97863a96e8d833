import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import { toErrorPayload, KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import { createFramePreparer } from '../../../src-shared/frames/prepare-frames';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { GateReplayer } from '../../../src-shared/trace/replay';
import { allocateBatchMetadata, TraceBuilder } from '../../../src-shared/trace/trace-builder';
import type { Trace } from '../../../src-shared/trace/trace';
import type { ReplayOutput } from '../../../src-shared/trace/replay';
import type { InferenceClient, TimedBranchOutputs } from '../inference/inference-client';
import type { FrameSource } from '../sources/frame-source';
import { LatencyRecorder, type LatencyReport } from './latency-recorder';

/**
 * An offline run: source -> (fit, corrupt) -> model (batched, in the inference process) -> Trace ->
 * gate -> fused outputs, with the settings of the run. Up to `inFlight` batches (default 4) are in
 * the inference process at once: one running on each of its CPU sessions (session-layout.ts) and
 * the next ones already there when a session frees up (3 in flight measured engine/bare 0.92-1.11,
 * median 0.97 over 14 bench runs; 4: 0.96-1.07, median 1.02 over 6). A batch lost to a crashed
 * inference process is sent again after the restart; a failure that persists ends the run, which
 * still returns every frame processed before it (with the error).
 *
 * Latency per frame is the batch's figure divided by its frame count (stated in the report).
 */
/** The longest the run keeps the event loop to itself (about one frame of a 60 Hz display). */
const YIELD_EVERY_MS = 16;

export interface OfflineRunOptions {
  client: InferenceClient;
  source: FrameSource;
  schedule: CorruptionSchedule;
  streamSeed: number;
  settings: GateSettings;
  batchSize: number;
  inFlight?: number;
  maxFrames?: number;
  /** The source frame the stream starts at (default 0); the stream's own frame count starts at 0. */
  fromFrame?: number;
  /** Attempts per batch when the inference process dies under it (default 3). */
  attemptsPerBatch?: number;
  /** Keep the model's `features` output in the trace (the model must have one). */
  recordFeatures?: boolean;
  /** Record this many classes a frame (a kept-class trace, TraceBuilder); default every class. */
  keepClasses?: number;
  onProgress?: (framesDone: number, framesTotal: number | null) => void;
  signal?: AbortSignal;
}

export interface OfflineRunResult {
  trace: Trace;
  output: ReplayOutput;
  latencyPerFrame: LatencyReport;
  framesProcessed: number;
  wallMs: number;
  restarts: number;
  error: KnobErrorPayload | null;
}

interface Prepared {
  first: number;
  count: number;
  frames: Uint8Array;
  timestamps: Float64Array;
  labels: Int32Array | null;
  metadata: ReturnType<typeof allocateBatchMetadata>;
  preprocessMs: number;
  result: Promise<TimedBranchOutputs>;
}

export async function runOffline(options: OfflineRunOptions): Promise<OfflineRunResult> {
  const { client, source, settings } = options;
  const model = client.description;
  const spec = model.input;
  const target = { width: spec.width, height: spec.height, channels: spec.channels };
  const preparer = createFramePreparer(target, options.schedule, options.streamSeed);
  const keepFeatures = options.recordFeatures ?? false;
  if (keepFeatures && model.featureCount === null)
    throw new KnobError(
      'INVALID_INPUT',
      `${model.paths[0]}: the model has no 'features' output to record (Knob-native contract, [N, F])`,
    );
  const builder = new TraceBuilder(
    model.classCount,
    model.labelNames,
    1 / source.info.frameRateHz,
    source.info.hasLabels,
    Math.min(options.maxFrames ?? source.info.frameCount ?? 1024, 1 << 20),
    keepFeatures ? model.featureCount : null,
    options.keepClasses ?? null,
  );
  const replayer = new GateReplayer(settings, 0);
  const latency = new LatencyRecorder();
  const inFlight = Math.max(1, options.inFlight ?? 4);
  const attempts = options.attemptsPerBatch ?? 3;
  const restartsBefore = client.restarts;
  const started = performance.now();
  const limit = options.maxFrames ?? Infinity;
  const total = Math.min(limit, (source.info.frameCount ?? Infinity) - (options.fromFrame ?? 0));
  const queue: Prepared[] = [];
  // Frame buffers of finished batches are reused (a batch's buffer is kept until it finishes, for a
  // resend after a crash): no 200 KB allocation per batch for the collector to chase.
  const batchBytes = options.batchSize * target.width * target.height * target.channels;
  const freeFrames: Uint8Array[] = [];
  let lastYield = performance.now();
  let error: KnobErrorPayload | null = null;
  let streamIndex = 0;

  const send = (p: Omit<Prepared, 'result'>): Prepared => ({
    ...p,
    result: client.run(p.frames, p.count, p.first, { keepFeatures }),
  });
  const finish = async (p: Prepared): Promise<void> => {
    let outputs: TimedBranchOutputs | null = null;
    for (let attempt = 1; outputs === null; attempt++) {
      try {
        outputs = await p.result;
      } catch (caught) {
        if (!(caught instanceof KnobError && caught.code === 'INFERENCE_CRASHED') || attempt >= attempts) throw caught;
        await client.whenReady();
        p.result = client.run(p.frames, p.count, p.first, { keepFeatures });
      }
    }
    freeFrames.push(new Uint8Array(p.frames.buffer));
    const gateStarted = performance.now();
    const first = builder.append(
      p.count,
      outputs.zStatic,
      outputs.zDyn,
      outputs.uRef,
      p.timestamps,
      p.labels,
      p.metadata,
      outputs.features,
    );
    replayer.advance(builder.trace, first, first + p.count, builder.output);
    const gateMs = performance.now() - gateStarted;
    const perFrame = 1 / p.count;
    for (let i = 0; i < p.count; i++) {
      latency.record(
        (p.preprocessMs + outputs.preprocessMs) * perFrame,
        outputs.inferenceMs * perFrame,
        gateMs * perFrame,
        (p.preprocessMs + outputs.roundTripMs + gateMs) * perFrame,
      );
    }
    options.onProgress?.(builder.frameCount, Number.isFinite(total) ? total : null);
  };

  try {
    for await (const batch of source.batches(options.batchSize, options.fromFrame ?? 0)) {
      if (options.signal?.aborted) throw new KnobError('CANCELLED', 'run cancelled');
      const count = Math.min(batch.count, limit - streamIndex);
      if (count <= 0) break;
      const prepStarted = performance.now();
      const frames = (freeFrames.pop() ?? new Uint8Array(batchBytes)).subarray(
        0,
        count * target.width * target.height * target.channels,
      );
      const metadata = allocateBatchMetadata(count);
      preparer.prepare(batch.frames, source.info, count, streamIndex, batch.first, frames, metadata);
      const prepared = send({
        first: streamIndex,
        count,
        frames,
        timestamps: batch.timestampsSeconds.subarray(0, count),
        labels: batch.labels === null ? null : batch.labels.subarray(0, count),
        metadata,
        preprocessMs: performance.now() - prepStarted,
      });
      prepared.result.catch(() => undefined); // awaited in order by finish()
      queue.push(prepared);
      streamIndex += count;
      while (queue.length >= inFlight) await finish(queue.shift()!);
      if (streamIndex >= limit) break;
      // A turn of the event loop at least every YIELD_EVERY_MS. When preparing a batch takes longer
      // than inferring one (a slow corruption), every result is already back and awaiting it never
      // yields: messages (a cancel, the next results) and progress timers would wait for the end.
      if (performance.now() - lastYield >= YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
    }
    while (queue.length > 0) await finish(queue.shift()!);
  } catch (caught) {
    error = toErrorPayload(caught);
  }
  return {
    trace: builder.snapshot(),
    output: builder.snapshotOutput(),
    latencyPerFrame: latency.report(),
    framesProcessed: builder.frameCount,
    wallMs: performance.now() - started,
    restarts: client.restarts - restartsBefore,
    error,
  };
}
