import { seededRandom } from '../../src-shared/random';
import { timestampsFromFrameRate, TRACE_FORMAT_VERSION, type Trace } from '../../src-shared/trace';

export interface SyntheticTraceOptions {
  frames: number;
  classCount?: number;
  frameRateHz?: number;
  seed?: number;
  /** u* per frame; default: a 0.9 -> 0.3 -> 0.9 step at thirds of the stream. */
  uRef?: (frame: number) => number;
  /** Irregular timestamps: jitter each interval by up to this fraction. */
  jitter?: number;
}

/** A trace with random logits and labels, for tests and benchmarks that need no model. */
export function syntheticTrace(options: SyntheticTraceOptions): Trace {
  const { frames, classCount = 10, frameRateHz = 30, seed = 1, jitter = 0 } = options;
  const random = seededRandom(seed);
  // Logits shaped like a classifier's: the true class usually on top (dynamic branch sharper and
  // more often right), plus noise.
  const labels = new Int32Array(frames);
  const zStatic = new Float32Array(frames * classCount);
  const zDyn = new Float32Array(frames * classCount);
  for (let i = 0; i < frames; i++) {
    const label = Math.floor(random() * classCount);
    labels[i] = label;
    const staticTop = random() < 0.7 ? label : Math.floor(random() * classCount);
    const dynTop = random() < 0.8 ? label : Math.floor(random() * classCount);
    for (let k = 0; k < classCount; k++) {
      zStatic[i * classCount + k] = 2 * (random() - 0.5) + (k === staticTop ? 1.5 : 0);
      zDyn[i * classCount + k] = 4 * (random() - 0.5) + (k === dynTop ? 4 : 0);
    }
  }
  const uRef = new Float32Array(frames);
  const third = Math.floor(frames / 3);
  for (let i = 0; i < frames; i++) {
    uRef[i] = options.uRef ? options.uRef(i) : i >= third && i < 2 * third ? 0.3 : 0.9;
  }
  let timestampsSeconds = timestampsFromFrameRate(frames, frameRateHz);
  if (jitter > 0) {
    timestampsSeconds = new Float64Array(frames);
    let t = 0;
    for (let i = 0; i < frames; i++) {
      timestampsSeconds[i] = t;
      t += (1 + jitter * (2 * random() - 1)) / frameRateHz;
    }
  }
  return {
    formatVersion: TRACE_FORMAT_VERSION,
    frameCount: frames,
    classCount,
    timestampsSeconds,
    zStatic,
    zDyn,
    uRef,
    labels,
    labelNames: Array.from({ length: classCount }, (_, k) => `class ${k}`),
    metadata: {},
    nominalDtSeconds: 1 / frameRateHz,
  };
}
