import { dotProduct } from '../calibrators/dot-product';
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

/** Whether this machine stores numbers little-endian, as WebAssembly's memory always does. */
const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

/**
 * An AR(p) recursion over `count` frames, in place: block[t] holds frame t's innovation on entry
 * and its value z_t = innovation_t + sum_j coefficients[j] z_{t-1-j} on return. `lags` is the
 * ring of the last p values twice over (lags[i] = lags[i + p] for i < p, and lags[at + j] =
 * z_{t-1-j}), updated as the frames go; the ring's position after the block is returned. Each value
 * is bit for bit autoregressInJavaScript's, computed in WebAssembly with SIMD
 * (autoregression-kernel.wat): 15 ns a frame at p = 46 against 53-65 ns (`npm run bench -- drift`,
 * 2026-12-07, the 2-core build machine). On a big-endian machine, where the views below would
 * write the memory in the wrong byte order, the JavaScript runs instead.
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
  if (!LITTLE_ENDIAN) return autoregressInJavaScript(coefficients, lags, at, block, count);
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

/**
 * The same recursion in JavaScript, frame by frame: z_t = innovation_t + dotProduct(coefficients,
 * 0, lags, at, p), the ring stepped back one and z written twice. What the copula stream ran before
 * the kernel; the kernel's test compares with it bit for bit and the drift benchmark times both.
 */
export function autoregressInJavaScript(
  coefficients: Float64Array,
  lags: Float64Array,
  at: number,
  block: Float64Array,
  count: number,
): number {
  const p = coefficients.length;
  for (let t = 0; t < count; t++) {
    const z = block[t]! + dotProduct(coefficients, 0, lags, at, p);
    block[t] = z;
    if (p > 0) {
      at = at === 0 ? p - 1 : at - 1;
      lags[at] = lags[at + p] = z;
    }
  }
  return at;
}
