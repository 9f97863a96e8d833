/**
 * The pure pieces under the engine: preprocessing by the input spec's formula, the box-filter frame
 * fitter, the adapter's gate targets against their definitions, latency percentiles against
 * numpy.percentile's linear rule, and the growable trace equal to one built at once.
 */
import { describe, expect, it } from 'vitest';
import { fitFrameInto, type FrameGeometry } from '../../src-shared/frames/fit-frame';
import { seededRandom } from '../../src-shared/random';
import { framesToTensorInto, tensorMap, tensorShape } from '../../src-shared/frames/frame-to-tensor';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { createFramePreparer } from '../../src-shared/frames/prepare-frames';
import { parseCorruptionSchedule } from '../../src-shared/corruptions/schedule';
import { corruptBytes } from '../../src-shared/corruptions/corruptions';
import {
  agreementGateTargetInto,
  certaintyGateTargetInto,
  temperedLogitsInto,
} from '../../src-shared/fusion/gate-target';
import { frameReadout } from '../../src-shared/trace/frame-readout';
import { fusionDiagnosticsInto } from '../../src-shared/fusion/temperature';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { latencySummary } from '../../src-shared/metrics/latency-percentiles';
import { replay } from '../../src-shared/trace/replay';
import { allocateBatchMetadata, TraceBuilder } from '../../src-shared/trace/trace-builder';
import { KnobError } from '../../src-shared/errors';

const rgbSpec: InputSpec = {
  name: 'x',
  layout: 'NCHW',
  width: 2,
  height: 1,
  channels: 3,
  value_range: [-1, 1],
  mean: [0.1, 0.2, 0.3],
  std: [0.5, 0.25, 2],
};

describe('preprocessing', () => {
  it('applies x = (lo + b/255 (hi - lo) - mean_c) / std_c per channel, planar for NCHW and interleaved for NHWC', () => {
    const frames = Uint8Array.of(0, 128, 255, 10, 20, 30);
    const planar = new Float32Array(6);
    framesToTensorInto(frames, 1, rgbSpec, tensorMap(rgbSpec), planar);
    const expected = (b: number, c: number) => Math.fround((-1 + (b / 255) * 2 - rgbSpec.mean[c]) / rgbSpec.std[c]);
    expect(Array.from(planar)).toEqual([
      expected(0, 0),
      expected(10, 0),
      expected(128, 1),
      expected(20, 1),
      expected(255, 2),
      expected(30, 2),
    ]);
    // a batch: each frame its own three planes
    const two = new Float32Array(12);
    framesToTensorInto(Uint8Array.of(...frames, 1, 2, 3, 4, 5, 6), 2, rgbSpec, tensorMap(rgbSpec), two);
    expect(Array.from(two.subarray(0, 6))).toEqual(Array.from(planar));
    expect(Array.from(two.subarray(6))).toEqual([
      expected(1, 0),
      expected(4, 0),
      expected(2, 1),
      expected(5, 1),
      expected(3, 2),
      expected(6, 2),
    ]);
    const interleaved = new Float32Array(6);
    const nhwc = { ...rgbSpec, layout: 'NHWC' as const };
    framesToTensorInto(frames, 1, nhwc, tensorMap(nhwc), interleaved);
    expect(Array.from(interleaved)).toEqual([
      expected(0, 0),
      expected(128, 1),
      expected(255, 2),
      expected(10, 0),
      expected(20, 1),
      expected(30, 2),
    ]);
    expect(tensorShape(rgbSpec, 4)).toEqual([4, 3, 1, 2]);
    expect(tensorShape(nhwc, 4)).toEqual([4, 1, 2, 3]);
  });

  it('fits frames by area averaging, colour to grey by Rec. 601 luma, grey to colour by replication', () => {
    const source = Uint8Array.of(0, 100, 200, 255, 10, 20, 30, 40, 1, 2, 3, 4, 5, 6, 7, 8);
    const out = new Uint8Array(4);
    fitFrameInto(source, { width: 4, height: 4, channels: 1 }, { width: 2, height: 2, channels: 1 }, out, 0);
    expect(Array.from(out)).toEqual([
      Math.round((0 + 100 + 10 + 20) / 4),
      Math.round((200 + 255 + 30 + 40) / 4),
      Math.round((1 + 2 + 5 + 6) / 4),
      Math.round((3 + 4 + 7 + 8) / 4),
    ]);
    const rgb = Uint8Array.of(255, 0, 0, 0, 255, 0);
    const grey = new Uint8Array(2);
    fitFrameInto(rgb, { width: 2, height: 1, channels: 3 }, { width: 2, height: 1, channels: 1 }, grey, 0);
    expect(Array.from(grey)).toEqual([Math.round(0.299 * 255), Math.round(0.587 * 255)]);
    const back = new Uint8Array(6);
    fitFrameInto(grey, { width: 2, height: 1, channels: 1 }, { width: 2, height: 1, channels: 3 }, back, 0);
    expect(Array.from(back)).toEqual([76, 76, 76, 150, 150, 150]);
    expect(() =>
      fitFrameInto(
        Uint8Array.of(1, 2),
        { width: 2, height: 2, channels: 1 },
        { width: 1, height: 1, channels: 1 },
        out,
        0,
      ),
    ).toThrow(KnobError);
  });

  it('the two-pass box filter equals the coverage-weighted mean of every source pixel under each output pixel', () => {
    const random = seededRandom(5);
    // the definition, one output pixel at a time (the one-pass filter the two passes replaced)
    const reference = (source: Uint8Array, from: FrameGeometry, to: FrameGeometry, x: number, y: number, c: number) => {
      const xs = from.width / to.width;
      const ys = from.height / to.height;
      let sum = 0;
      for (let sy = 0; sy < from.height; sy++)
        for (let sx = 0; sx < from.width; sx++) {
          const wx = Math.max(0, Math.min((x + 1) * xs, sx + 1) - Math.max(x * xs, sx));
          const wy = Math.max(0, Math.min((y + 1) * ys, sy + 1) - Math.max(y * ys, sy));
          if (wx === 0 || wy === 0) continue;
          const at = (sy * from.width + sx) * from.channels;
          const value =
            to.channels === 1 && from.channels !== 1
              ? 0.299 * source[at] + 0.587 * source[at + 1] + 0.114 * source[at + 2]
              : source[at + (from.channels === 1 ? 0 : c)];
          sum += wx * wy * value;
        }
      return sum / (xs * ys);
    };
    let compared = 0;
    for (let trial = 0; trial < 40; trial++) {
      const from = {
        width: 1 + Math.floor(random() * 37),
        height: 1 + Math.floor(random() * 29),
        channels: [1, 3, 4][Math.floor(random() * 3)],
      };
      const to = {
        width: 1 + Math.floor(random() * 31),
        height: 1 + Math.floor(random() * 23),
        channels: [1, 3][trial % 2],
      };
      const source = Uint8Array.from({ length: from.width * from.height * from.channels }, () =>
        Math.floor(random() * 256),
      );
      const out = new Uint8Array(to.width * to.height * to.channels + 5);
      fitFrameInto(source, from, to, out, 5);
      for (let y = 0; y < to.height; y++)
        for (let x = 0; x < to.width; x++)
          for (let c = 0; c < to.channels; c++) {
            const exact = reference(source, from, to, x, y, c);
            const got = out[5 + (y * to.width + x) * to.channels + c];
            // the sums are taken in another order: a rounded value may move only at an exact tie
            if (Math.abs((exact % 1) - 0.5) < 1e-9) expect(Math.abs(got - exact)).toBeLessThanOrEqual(0.5 + 1e-9);
            else expect(got).toBe(Math.min(255, Math.max(0, Math.round(exact))));
            compared++;
          }
    }
    expect(compared).toBeGreaterThan(10000);
  });

  it('corrupts each frame by the schedule and records corruption, severity, seed and source index', () => {
    const preparer = createFramePreparer(
      { width: 28, height: 28, channels: 1 },
      {
        kind: 'step',
        corruption: 'gaussian_noise',
        levels: [
          { atFrame: 0, severity: 0 },
          { atFrame: 2, severity: 5 },
        ],
      },
      11,
    );
    const frames = new Uint8Array(4 * 784).fill(128);
    const out = new Uint8Array(4 * 784);
    const metadata = allocateBatchMetadata(4);
    preparer.prepare(frames, { width: 28, height: 28, channels: 1 }, 4, 0, 100, out, metadata);
    expect(metadata.corruption).toEqual([null, null, 'gaussian_noise', 'gaussian_noise']);
    expect(Array.from(metadata.severity)).toEqual([0, 0, 5, 5]);
    expect(Array.from(metadata.sourceFrame)).toEqual([100, 101, 102, 103]);
    expect(out.subarray(0, 784).every((v) => v === 128)).toBe(true);
    expect(out.subarray(2 * 784, 3 * 784).some((v) => v !== 128)).toBe(true);
    expect(Array.from(out.subarray(2 * 784, 3 * 784))).not.toEqual(Array.from(out.subarray(3 * 784)));
  });

  it("a batch's JPEG frames, compressed together by severity, are the bytes frame-by-frame preparation gives", () => {
    const geometry = { width: 20, height: 12, channels: 3 } as const;
    const schedule = parseCorruptionSchedule({
      kind: 'random',
      corruptions: ['jpeg_compression', 'gaussian_noise'],
      holdFrames: 1,
    });
    const count = 24;
    const frameBytes = 20 * 12 * 3;
    const random = seededRandom(5);
    const frames = Uint8Array.from({ length: count * frameBytes }, () => Math.floor(256 * random()));
    const prepared = (batch: number) => {
      const preparer = createFramePreparer(geometry, schedule, 7);
      const out = new Uint8Array(count * frameBytes);
      const metadata = allocateBatchMetadata(count);
      for (let first = 0; first < count; first += batch)
        preparer.prepare(
          frames.subarray(first * frameBytes),
          geometry,
          Math.min(batch, count - first),
          first,
          first,
          out.subarray(first * frameBytes),
          metadata,
          first,
        );
      return { out, metadata };
    };
    const together = prepared(count);
    const jpegSeverities = new Set(
      together.metadata.severity.filter((_, i) => together.metadata.corruption[i] === 'jpeg_compression'),
    );
    expect(jpegSeverities.size).toBeGreaterThan(1);
    expect(Buffer.from(together.out).equals(Buffer.from(prepared(1).out))).toBe(true);
    // and each JPEG frame is the canonical round trip of its own bytes (the frames fit as they are)
    let jpegFrames = 0;
    for (let i = 0; i < count; i++) {
      if (together.metadata.corruption[i] !== 'jpeg_compression') continue;
      const own = frames.subarray(i * frameBytes, (i + 1) * frameBytes);
      const expected = corruptBytes(own, 20, 12, 3, {
        name: 'jpeg_compression',
        severity: together.metadata.severity[i]!,
        seed: 0,
      });
      expect(
        Buffer.from(together.out.subarray(i * frameBytes, (i + 1) * frameBytes)).equals(Buffer.from(expected)),
      ).toBe(true);
      expect(Buffer.from(expected).equals(Buffer.from(own))).toBe(false);
      jpegFrames++;
    }
    expect(jpegFrames).toBeGreaterThan(2);
  });
});

describe('adapter gate targets', () => {
  it('entropy and margin rules are 1 for a certain prediction and 0 for a uniform one', () => {
    const z = Float32Array.of(50, 0, 0, 0, 0, 0);
    const u = new Float64Array(2);
    const scratch = new Float64Array(3);
    certaintyGateTargetInto(z, 2, 3, 'entropy', u, scratch);
    expect(u[0]).toBeCloseTo(1, 12);
    expect(u[1]).toBeCloseTo(0, 12);
    certaintyGateTargetInto(Float32Array.of(Math.log(3), 0, 0), 1, 3, 'margin', u, scratch);
    expect(u[0]).toBeCloseTo(3 / 5 - 1 / 5, 6);
  });

  it('agreement is 1 - total variation: 1 for equal rows, 0 for disjoint certain rows, and T0 tempers z', () => {
    const u = new Float64Array(2);
    agreementGateTargetInto(Float32Array.of(1, 2, 60, 0), Float32Array.of(1, 2, 0, 60), 2, 2, u, new Float64Array(4));
    expect(u[0]).toBe(1);
    expect(u[1]).toBeCloseTo(0, 12);
    const tempered = new Float32Array(2);
    temperedLogitsInto(Float32Array.of(3, -6), 2, 3, tempered);
    expect(Array.from(tempered)).toEqual([1, -2]);
    expect(() => temperedLogitsInto(Float32Array.of(1), 1, 0.5, tempered)).toThrow(/T0 must be/);
    expect(() =>
      certaintyGateTargetInto(Float32Array.of(Number.NaN, 0), 1, 2, 'entropy', u, new Float64Array(2)),
    ).toThrow(KnobError);
  });

  it('the live readout agrees with the batched T_eff and CSR', () => {
    const zs = Float32Array.of(2, 1, 0, -1);
    const zd = Float32Array.of(0, 3, 1, 0);
    const readout = frameReadout(zs, zd, 0, 4, 0.4, 2);
    const teff = new Float64Array(1);
    const csr = new Float64Array(1);
    fusionDiagnosticsInto(zs, zd, Float64Array.of(0.4), 4, 0, 1, teff, csr, new Float64Array(4));
    expect(readout.effectiveTemperature).toBe(teff[0]);
    expect(readout.confidenceShrinkageRatio).toBe(csr[0]);
    expect(readout.branchesDisagree).toBe(true);
    expect(readout.top).toHaveLength(2);
    expect(readout.top[0].fused).toBeGreaterThan(readout.top[1].fused);
  });
});

describe('latency percentiles', () => {
  it('match numpy.percentile (linear) on a known sample and never produce NaN', () => {
    // numpy.percentile([1, 2, 3, 4, 10], [50, 95, 99]) = [3.0, 8.8, 9.76]
    const summary = latencySummary(Float64Array.of(10, 1, 4, 2, 3))!;
    expect(summary.p50Ms).toBe(3);
    expect(summary.p95Ms).toBeCloseTo(8.8, 12);
    expect(summary.p99Ms).toBeCloseTo(9.76, 12);
    expect(summary.meanMs).toBe(4);
    expect(latencySummary(new Float64Array(0))).toBeNull();
  });
});

describe('growing traces', () => {
  it('a trace appended in pieces across capacity doublings equals the frames it was given, and replays the same', () => {
    const k = 3;
    const builder = new TraceBuilder(k, ['a', 'b', 'c'], 1 / 30, true, 2);
    const n = 37;
    const zs = Float32Array.from({ length: n * k }, (_, i) => Math.sin(i));
    const zd = Float32Array.from({ length: n * k }, (_, i) => Math.cos(i));
    const u = Float32Array.from({ length: n }, (_, i) => (i % 10) / 10);
    const t = Float64Array.from({ length: n }, (_, i) => i / 30);
    const labels = Int32Array.from({ length: n }, (_, i) => i % 3);
    const metadata = allocateBatchMetadata(n);
    for (let from = 0; from < n; from += 5) {
      const count = Math.min(5, n - from);
      for (let i = 0; i < count; i++) metadata.corruption[i] = from + i > 20 ? 'fog' : null;
      builder.append(
        count,
        zs.subarray(from * k),
        zd.subarray(from * k),
        u.subarray(from),
        t.subarray(from),
        labels.subarray(from),
        metadata,
      );
    }
    const trace = builder.snapshot();
    expect(trace.frameCount).toBe(n);
    expect(Array.from(trace.zStatic)).toEqual(Array.from(zs));
    expect(Array.from(trace.labels!)).toEqual(Array.from(labels));
    const corruption = trace.metadata.corruption;
    expect(corruption.kind === 'category' && corruption.dictionary).toEqual(['none', 'fog']);
    expect(replay(trace, DEFAULT_GATE_SETTINGS).g).toHaveLength(n);
    expect(() => builder.setLabel(99, 0)).toThrow(/frame 99 is not in the trace/);
  });
});

describe('headline intervals', () => {
  it('bracket the point estimates, repeat for a seed, and narrow with more samples', async () => {
    const { syntheticTrace } = await import('../support/synthetic-trace');
    const { headlineFigures } = await import('../../src-shared/metrics/headline-intervals');
    const { scoresFromLogits, topLabelScores } = await import('../../src-shared/metrics/scores');
    const { metricSuite } = await import('../../src-shared/metrics/metric-suite');
    const width = (n: number) => {
      const trace = syntheticTrace({ frames: n, seed: 5 });
      const scores = scoresFromLogits(trace.zDyn, trace.classCount, trace.labels!);
      const top = topLabelScores(scores);
      const figures = headlineFigures(scores, top, { seed: 1 });
      const values = metricSuite(scores);
      expect(figures).toHaveLength(4);
      for (const figure of figures) {
        // The figure is the suite's value of the same identity, bracketed by its interval.
        expect(figure.value).toBeCloseTo(values.find((v) => v.identity === figure.identity)!.value, 12);
        expect(figure.lo).toBeLessThanOrEqual(figure.value);
        expect(figure.hi).toBeGreaterThanOrEqual(figure.value);
      }
      expect(headlineFigures(scores, top, { seed: 1 })).toEqual(figures);
      const accuracy = figures.find((f) => f.identity === 'accuracy(top-1)')!;
      return accuracy.hi - accuracy.lo;
    };
    expect(width(4000)).toBeLessThan(width(250));
  });
});
