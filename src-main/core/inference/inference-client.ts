import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import { checkUserFile } from '../files/user-files';
import { WorkerChannel } from '../workers/worker-channel';
import type { BranchOutputs } from './loaded-model';
import { forkLauncher, type InferenceChild, type InferenceLauncher } from './inference-launcher';
import type { InferenceRequest, InferenceResult } from './inference-protocol';

/**
 * The engine's handle on the inference process. A model error comes back as a typed error and the
 * process lives on; a process that dies rejects what was in flight with INFERENCE_CRASHED and is
 * restarted with exponential backoff (100 ms doubling to 3.2 s), reloading the same model. Callers
 * hold all stream state, so after a restart they simply carry on. Each process gets its own
 * channel of the worker protocol (worker-protocol.ts): requests under ids, a cancelled batch told
 * to the process (one still waiting there never runs), a dead process failing only its own calls.
 */
export interface RestartNotice {
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface InferenceClientOptions {
  /** Consecutive crashes tolerated before the client gives up (default 5). */
  maxConsecutiveRestarts?: number;
  onRestart?: (notice: RestartNotice) => void;
  /** How the process is started (default child_process.fork; Electron passes utilityProcess). */
  launcher?: InferenceLauncher;
}

export interface TimedBranchOutputs extends BranchOutputs {
  /** Wall time from sending the frames to holding the outputs, in the caller's process. */
  roundTripMs: number;
}

const BASE_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 3200;

export class InferenceClient {
  private child: InferenceChild | null = null;
  /** The current process's channel. */
  private channel: WorkerChannel<InferenceRequest, InferenceResult> | null = null;
  private ready: Promise<ModelDescription>;
  private consecutiveCrashes = 0;
  private closed = false;
  private failure: KnobError | null = null;
  private described: ModelDescription | null = null;
  /** Times the process was restarted after dying. */
  restarts = 0;

  private constructor(
    private readonly modelOptions: ModelOptions,
    private readonly options: InferenceClientOptions,
  ) {
    this.ready = this.spawn();
  }

  /** Starts the process and loads the model; rejects with the load error (typed) if it cannot. */
  static async start(modelOptions: ModelOptions, options: InferenceClientOptions = {}): Promise<InferenceClient> {
    // The model files are checked here first (regular files within the model limit): a FIFO, a
    // device or a folder is refused at once, before a process is started to read it.
    for (const path of [modelOptions.path, modelOptions.secondPath])
      if (path !== undefined) await checkUserFile(path, 'model');
    const client = new InferenceClient(modelOptions, options);
    try {
      await client.ready;
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  get description(): ModelDescription {
    if (this.described === null) throw new KnobError('NOT_AVAILABLE', 'the model is not loaded yet');
    return this.described;
  }

  /** Process id of the current inference process (tests kill it to check recovery). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private spawn(): Promise<ModelDescription> {
    let loaded = false;
    const channel = new WorkerChannel<InferenceRequest, InferenceResult>(
      { postMessage: (message) => child.send(message) },
      'the inference process',
    );
    const child: InferenceChild = (this.options.launcher ?? forkLauncher)({
      message: (message) => channel.receive(message),
      exit: (reason) => {
        if (this.child === child) {
          this.child = null;
          this.channel = null;
        }
        channel.end(new KnobError('INFERENCE_CRASHED', reason));
        if (loaded) this.onCrash(reason);
      },
    });
    this.child = child;
    this.channel = channel;
    return (channel.call({ kind: 'load', options: this.modelOptions }) as Promise<ModelDescription>).then(
      (description) => {
        loaded = true;
        this.described = description;
        return description;
      },
    );
  }

  private onCrash(reason: string): void {
    if (this.closed) return;
    this.consecutiveCrashes++;
    const limit = this.options.maxConsecutiveRestarts ?? 5;
    if (this.consecutiveCrashes > limit) {
      this.failure = new KnobError('INFERENCE_CRASHED', `gave up after ${limit} restarts in a row; last: ${reason}`);
      this.ready = Promise.reject(this.failure);
      this.ready.catch(() => undefined);
      return;
    }
    const delayMs = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (this.consecutiveCrashes - 1));
    this.restarts++;
    this.options.onRestart?.({ attempt: this.consecutiveCrashes, delayMs, reason });
    this.ready = new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(() => {
      if (this.closed) throw new KnobError('CANCELLED', 'inference client closed');
      return this.spawn();
    });
    this.ready.catch(() => undefined);
  }

  /**
   * Runs a batch; waits through a restart in progress. Rejects with a typed error, or with CANCELLED
   * as soon as `signal` aborts (the process finishes the batch and its result is dropped).
   * `keepFeatures`: also bring back the model's `features` output (null when it has none).
   */
  async run(
    frames: Uint8Array,
    count: number,
    firstFrame: number,
    options: { signal?: AbortSignal; keepFeatures?: boolean } = {},
  ): Promise<TimedBranchOutputs> {
    const { signal, keepFeatures = false } = options;
    if (this.closed) throw new KnobError('CANCELLED', 'inference client closed');
    await this.ready;
    const { child, channel } = this;
    if (child === null || channel === null || !child.connected)
      throw new KnobError('INFERENCE_CRASHED', 'inference process is not running');
    const sentAt = performance.now();
    const outputs = (await channel.call(
      { kind: 'run', frames, count, firstFrame, keepFeatures },
      { signal, what: `inference of frames ${firstFrame}-${firstFrame + count - 1}` },
    )) as BranchOutputs;
    this.consecutiveCrashes = 0;
    return { ...outputs, roundTripMs: performance.now() - sentAt };
  }

  /** Resolves when the process is up again (after a crash) or rejects if the client gave up. */
  async whenReady(): Promise<void> {
    await this.ready;
  }

  /** Test hook: the process exits as if its native code had crashed. */
  simulateCrash(): void {
    void this.channel?.call({ kind: 'crash' }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const { child, channel } = this;
    this.child = null;
    this.channel = null;
    channel?.end(new KnobError('CANCELLED', 'inference client closed'));
    await child?.kill();
  }
}
