import { AUTOREGRESSION_KERNEL_WASM } from './autoregression-kernel-wasm';

/**
 * The WebAssembly API this module uses: src-shared compiles against ES2022 alone (no DOM, no Node
 * types), and every runtime the app has (Node, Electron, Chromium) provides it.
 */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (
    module: object,
    imports: Record<string, Record<string, unknown>>,
  ) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer; grow(pages: number): number };
}

type Autoregress = (
  p: number,
  coefficientsAt: number,
  lagsAt: number,
  blockAt: number,
  count: number,
  at: number,
) => number;

const PAGE_BYTES = 65_536;

/**
 * One instance a thread, its memory grown as the largest call needs and shared by every stream:
 * a memory of its own per stream would reserve gigabytes of address space each (WebAssembly's
 * guard regions), and a calibration runs hundreds of streams.
 */
let kernel: { autoregress: Autoregress; memory: { buffer: ArrayBuffer; grow(pages: number): number } } | null = null;

function kernelWithBytes(bytes: number): { autoregress: Autoregress; buffer: ArrayBuffer } {
  if (kernel === null) {
    const api = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
    const memory = new api.Memory({ initial: 1 });
    const instance = new api.Instance(new api.Module(AUTOREGRESSION_KERNEL_WASM), { kernel: { memory } });
    kernel = { autoregress: instance.exports.autoregress as Autoregress, memory };
  }
  const missing = bytes - kernel.memory.buffer.byteLength;
  if (missing > 0) kernel.memory.grow(Math.ceil(missing / PAGE_BYTES));
  return { autoregress: kernel.autoregress, buffer: kernel.memory.buffer };
}

/**
 * An AR(p) recursion over `count` frames, in place: block[t] holds frame t's innovation on entry
 * and its value z_t = innovation_t + sum_j coefficients[j] z_{t-1-j} on return. `lags` is the
 * ring of the last p values twice over (lags[at + j] = lags[at + j + p] = z_{t-1-j}), updated as
 * the frames go; the ring's position after the block is returned. Each value is bit for bit the
 * JavaScript `innovation + dotProduct(coefficients, 0, lags, at, p)` (dot-product.ts), computed in
 * WebAssembly with SIMD (autoregression-kernel.wat): 9 ns a frame at p = 50 against 60-70 ns, on
 * the 2-core build machine (2026-12-07).
 */
export function autoregressInPlace(
  coefficients: Float64Array,
  lags: Float64Array,
  at: number,
  block: Float64Array,
  count: number,
): number {
  const p = coefficients.length;
  if (lags.length < 2 * p || count > block.length) throw new RangeError('autoregressInPlace: lags or block too short');
  const lagsAt = p * 8;
  const blockAt = 3 * p * 8;
  const { autoregress, buffer } = kernelWithBytes(blockAt + count * 8);
  new Float64Array(buffer, 0, p).set(coefficients);
  const ring = new Float64Array(buffer, lagsAt, 2 * p);
  ring.set(lags.subarray(0, 2 * p));
  const frames = new Float64Array(buffer, blockAt, count);
  frames.set(block.subarray(0, count));
  const next = autoregress(p, 0, lagsAt, blockAt, count, at);
  lags.set(ring);
  block.set(frames);
  return next;
}
