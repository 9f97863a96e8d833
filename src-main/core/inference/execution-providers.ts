import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { ExecutionProviderName } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';

/**
 * Execution providers, tried one at a time, each in its own try/catch, in a per-platform order
 * (ARCHITECTURE.md): CUDA where its libraries are installed, then WebGPU, DirectML (Windows),
 * CoreML (macOS), and CPU last, which always works. Every provider not used is reported with why.
 */
export interface SkippedProvider {
  name: string;
  /** One readable line (what the operator sees). */
  reason: string;
  /** The provider's full message, for the log (empty when the reason is all there is). */
  detail: string;
}

export interface ProviderChoice {
  session: ort.InferenceSession;
  provider: ExecutionProviderName;
  skipped: SkippedProvider[];
}

const PLATFORM_PROVIDERS: Record<string, ExecutionProviderName[]> = {
  linux: ['cuda', 'webgpu', 'cpu'],
  win32: ['cuda', 'webgpu', 'dml', 'cpu'],
  darwin: ['webgpu', 'coreml', 'cpu'],
};

/** The providers this platform can have, in preference order. */
export function platformProviderOrder(platform: string = process.platform): ExecutionProviderName[] {
  return PLATFORM_PROVIDERS[platform] ?? ['cpu'];
}

/** onnxruntime-node ships the CUDA provider as a separate library, installed only on opt-in. */
function cudaLibraryPath(): string {
  const binding = createRequire(import.meta.url).resolve('onnxruntime-node');
  const root = join(dirname(binding), '..', '..');
  const library = process.platform === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so';
  return join(root, 'bin', 'napi-v6', process.platform, process.arch, library);
}

function unavailableReason(provider: ExecutionProviderName, platform: string): string | null {
  if (!platformProviderOrder(platform).includes(provider)) return `not available on ${platform}`;
  if (provider === 'cuda' && !existsSync(cudaLibraryPath())) {
    return 'CUDA provider libraries are not installed (reinstall onnxruntime-node with --onnxruntime-node-install=cuda12)';
  }
  return null;
}

/**
 * Session options for every session the app creates (the bench's bare session included, so the
 * comparison is fair). Intra-op threads do not spin-wait between parallel sections: spinning keeps
 * cores busy that the process's own JavaScript (preprocessing, IPC) needs, and on the 2-core build
 * machine a spinning session ran a 256-image batch of the default model about 20 % slower.
 */
export function sessionOptions(
  provider: ExecutionProviderName,
  intraOpThreads?: number,
): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [provider],
    ...(intraOpThreads === undefined ? {} : { intraOpNumThreads: intraOpThreads }),
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  };
}

/**
 * onnxruntime's message as one readable line: its first line without the C++ source location and
 * function signature, and after a failed internal check only the explanation that follows it
 * ("/onnxruntime_src/.../webgpu_context.cc:136 onnxruntime::...::<lambda()> x == y was false.
 * Failed to get a WebGPU adapter: ..." becomes "Failed to get a WebGPU adapter: ...").
 */
export function readableProviderError(message: string): string {
  const line = message.split('\n').find((l) => l.trim() !== '') ?? message;
  const explained = / was false\. (.+)$/.exec(line)?.[1];
  const readable = explained ?? line.replace(/^\S+\.(?:cc|cpp|h):\d+ \S+ /, '');
  return readable.length > 200 ? `${readable.slice(0, 197)}...` : readable;
}

/**
 * Creates a session on the first provider of `requested` (default: the platform order) that loads
 * the model. `modelBytes` is the whole ONNX file; `source` names it in errors.
 */
export async function createSessionOnFirstProvider(
  modelBytes: Uint8Array,
  source: string,
  requested: readonly ExecutionProviderName[] = platformProviderOrder(),
  intraOpThreads?: number,
): Promise<ProviderChoice> {
  const skipped: SkippedProvider[] = [];
  for (const provider of requested) {
    const unavailable = unavailableReason(provider, process.platform);
    if (unavailable !== null) {
      skipped.push({ name: provider, reason: unavailable, detail: '' });
      continue;
    }
    try {
      const session = await ort.InferenceSession.create(modelBytes, sessionOptions(provider, intraOpThreads));
      return { session, provider, skipped };
    } catch (error) {
      const message = (error as Error).message;
      skipped.push({ name: provider, reason: `failed to start: ${readableProviderError(message)}`, detail: message });
    }
  }
  const cpuFailure = skipped.find((s) => s.name === 'cpu' && s.reason.startsWith('failed'));
  if (cpuFailure !== undefined) {
    // CPU always exists, so its refusal is about the model itself; that is the reason to show.
    const others = skipped.filter((s) => s !== cpuFailure).map((s) => s.name);
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: onnxruntime cannot load it (${cpuFailure.reason.replace(/^failed to start: /, '')})${others.length ? `; also tried ${others.join(', ')}` : ''}`,
    );
  }
  throw new KnobError(
    'INVALID_INPUT',
    `${source}: no requested execution provider could run it (${skipped.map((s) => `${s.name}: ${s.reason}`).join('; ')})`,
  );
}
