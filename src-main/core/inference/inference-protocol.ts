import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { FromWorker, ToWorker } from '../workers/worker-protocol';
import type { BranchOutputs } from './loaded-model';

/**
 * What the engine asks the inference process, in the worker protocol (worker-protocol.ts) over
 * child_process IPC with the 'advanced' serialisation or Electron's utility-process port, so
 * typed arrays travel as binary, not JSON. A load answers the model's description, a run its
 * outputs.
 */
export type InferenceRequest =
  | { kind: 'load'; options: ModelOptions }
  | { kind: 'run'; frames: Uint8Array; count: number; firstFrame: number; keepFeatures: boolean }
  /** Test hook: makes the process exit at once, as a crashing native library would; never answered. */
  | { kind: 'crash' };

export type InferenceResult = ModelDescription | BranchOutputs;

export type ToInferenceProcess = ToWorker<InferenceRequest>;
export type FromInferenceProcess = FromWorker<InferenceResult>;

/**
 * Inside the inference process, between its main thread and the worker threads that own the
 * onnxruntime sessions: the same runs, relayed; a load says how many intra-op threads its session
 * gets.
 */
export type InferenceWorkerRequest =
  { kind: 'load'; options: ModelOptions; intraOpThreads: number } | Extract<InferenceRequest, { kind: 'run' }>;
