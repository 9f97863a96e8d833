import { KnobError } from '../../../src-shared/errors';
import { framesToTensorInto, tensorMap, type TensorMap } from '../../../src-shared/frames/frame-to-tensor';
import type { InputSpec } from '../../../src-shared/frames/input-spec';

/**
 * 8-bit frame batches (count x H x W x C at the spec's size) into the model's float32 input, in
 * pooled buffers: a buffer returns to the pool when its inference is done (release), so a steady
 * stream allocates nothing (a buffer of another batch size is replaced).
 */
export class BatchTensors {
  private readonly map: TensorMap;
  private readonly frameValues: number;
  private readonly free: Float32Array[] = [];

  constructor(private readonly spec: InputSpec) {
    this.map = tensorMap(spec);
    this.frameValues = spec.width * spec.height * spec.channels;
  }

  prepare(frames: Uint8Array, count: number): Float32Array {
    const values = count * this.frameValues;
    if (frames.length < values)
      throw new KnobError('INVALID_INPUT', `batch of ${count} frames holds ${frames.length} bytes, needs ${values}`);
    const pooled = this.free.pop();
    const data = pooled !== undefined && pooled.length === values ? pooled : new Float32Array(values);
    framesToTensorInto(frames, count, this.spec, this.map, data);
    return data;
  }

  release(data: Float32Array): void {
    if (this.free.length < 8) this.free.push(data);
  }
}
