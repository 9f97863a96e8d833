import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { KnobErrorPayload } from '../../../src-shared/errors';

/**
 * Messages between the engine and the inference process (child_process IPC with the 'advanced'
 * serialisation, so typed arrays travel as binary, not JSON).
 */
export type ToInferenceProcess =
  | { type: 'load'; options: ModelOptions }
  | { type: 'run'; id: number; frames: Uint8Array; count: number; firstFrame: number; keepFeatures: boolean }
  /** Test hook: makes the process exit at once, as a crashing native library would. */
  | { type: 'crash' };

export type FromInferenceProcess =
  | { type: 'loaded'; description: ModelDescription }
  | { type: 'load-failed'; error: KnobErrorPayload }
  | {
      type: 'result';
      id: number;
      zStatic: Float32Array;
      zDyn: Float32Array;
      uRef: Float32Array;
      features: Float32Array | null;
      preprocessMs: number;
      inferenceMs: number;
    }
  | { type: 'run-failed'; id: number; error: KnobErrorPayload };

/**
 * Inside the inference process, between its main thread (IPC) and the worker threads that own the
 * onnxruntime sessions: the same requests and replies, relayed; a load says how many intra-op
 * threads its session gets.
 */
export type ToInferenceWorker =
  { type: 'load'; options: ModelOptions; intraOpThreads: number } | Extract<ToInferenceProcess, { type: 'run' }>;
export type FromInferenceWorker = FromInferenceProcess;
