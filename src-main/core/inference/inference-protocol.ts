import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { KnobErrorPayload } from '../../../src-shared/errors';

/**
 * Messages between the engine and the inference process (child_process IPC with the 'advanced'
 * serialisation, so typed arrays travel as binary, not JSON).
 */
export type ToInferenceProcess =
  | { type: 'load'; options: ModelOptions }
  | { type: 'run'; id: number; frames: Uint8Array; count: number; firstFrame: number }
  /** Test hook: makes the process exit at once, as a crashing native library would. */
  | { type: 'crash' };

export type FromInferenceProcess =
  | { type: 'loaded'; description: ModelDescription }
  | { type: 'load-failed'; error: KnobErrorPayload }
  | { type: 'result'; id: number; zStatic: Float32Array; zDyn: Float32Array; uRef: Float32Array; preprocessMs: number; inferenceMs: number }
  | { type: 'run-failed'; id: number; error: KnobErrorPayload };

/**
 * Inside the inference process: its main thread (IPC, preprocessing) and the worker thread that
 * owns the onnxruntime sessions. Input tensors move to the worker and back (transferred, not
 * copied), so a small pool of buffers serves the whole stream.
 */
export type ToInferenceWorker =
  | { type: 'load'; options: ModelOptions; intraOpThreads: number }
  | { type: 'infer'; id: number; data: Float32Array; count: number; firstFrame: number };

export type FromInferenceWorker =
  | { type: 'loaded'; description: ModelDescription }
  | { type: 'load-failed'; error: KnobErrorPayload }
  | { type: 'inferred'; id: number; data: Float32Array; zStatic: Float32Array; zDyn: Float32Array; uRef: Float32Array; inferenceMs: number }
  | { type: 'infer-failed'; id: number; data: Float32Array; error: KnobErrorPayload };
