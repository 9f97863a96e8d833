import { describe, expect, it } from 'vitest';
import {
  CORRUPTION_NAMES,
  CORRUPTION_TABLE,
  applyCorruption,
  corruptBatch,
  corruptBytes,
  corruptionAt,
  imageFromBytes,
  imageToBytes,
  jpegRoundTripBatch,
  parseCorruptionSchedule,
  type CorruptionName,
} from '../../src-shared/corruptions';
import { KnobError } from '../../src-shared/errors';
import { seededRandom } from '../../src-shared/random';
import { fashionMnistSample } from '../support/fashion-mnist';

const grayscale = CORRUPTION_NAMES.filter((name) => !CORRUPTION_TABLE[name].rgbOnly);

function psnr(a: Uint8Array, b: Uint8Array): number {
  let mse = 0;
  for (let i = 0; i < a.length; i++) mse += (a[i]! - b[i]!) ** 2;
  mse /= a.length;
  return mse === 0 ? 99 : 10 * Math.log10((255 * 255) / mse);
}

describe('corruptions', () => {
  const sample = fashionMnistSample(200);

  it('same image, corruption, severity and seed give identical bytes; another seed differs for the random ones', () => {
    for (const name of grayscale) {
      const a = corruptBytes(sample.images[0]!, 28, 28, 1, { name, severity: 3, seed: 7 });
      const b = corruptBytes(sample.images[0]!, 28, 28, 1, { name, severity: 3, seed: 7 });
      expect(Buffer.from(a).equals(Buffer.from(b)), name).toBe(true);
    }
    for (const name of [
      'gaussian_noise',
      'shot_noise',
      'impulse_noise',
      'speckle_noise',
      'fog',
      'elastic_transform',
      'motion_blur',
    ] as CorruptionName[]) {
      const a = corruptBytes(sample.images[0]!, 28, 28, 1, { name, severity: 3, seed: 7 });
      const c = corruptBytes(sample.images[0]!, 28, 28, 1, { name, severity: 3, seed: 8 });
      expect(Buffer.from(a).equals(Buffer.from(c)), name).toBe(false);
    }
  });

  it('distortion (PSNR against the clean image) worsens monotonically with severity, averaged over 200 images', () => {
    for (const name of grayscale) {
      const frames = sample.images.map((bytes) => imageFromBytes(bytes, 28, 28, 1));
      const means = [1, 2, 3, 4, 5].map((severity) => {
        const corrupted = corruptBatch(
          frames,
          name,
          severity,
          frames.map((_, i) => i),
        ).map(imageToBytes);
        return corrupted.reduce((sum, bytes, i) => sum + psnr(sample.images[i]!, bytes), 0) / sample.images.length;
      });
      for (let s = 1; s < 5; s++)
        expect(means[s], `${name}: ${means.map((m) => m.toFixed(2)).join(' > ')}`).toBeLessThan(means[s - 1]!);
    }
  }, 120_000);

  it('work on RGB frames of any size, saturate included; saturate refuses grayscale with a typed error', () => {
    const random = seededRandom(3);
    const rgb = Uint8Array.from({ length: 40 * 30 * 3 }, () => Math.floor(random() * 256));
    for (const name of CORRUPTION_NAMES) {
      const out = corruptBytes(rgb, 40, 30, 3, { name, severity: 4, seed: 1 });
      expect(out.length).toBe(rgb.length);
      expect(psnr(rgb, out), name).toBeLessThan(99);
    }
    expect(() => corruptBytes(sample.images[0]!, 28, 28, 1, { name: 'saturate', severity: 1, seed: 0 })).toThrow(
      KnobError,
    );
    expect(() => corruptBytes(sample.images[0]!, 28, 28, 1, { name: 'fog', severity: 6, seed: 0 })).toThrow(
      /severity must be 1..5/,
    );
  });

  it('the batched JPEG round trip (one mosaic) equals one round trip per image, byte for byte', () => {
    const images = sample.images.slice(0, 20).map((bytes) => imageFromBytes(bytes, 28, 28, 1));
    const batched = jpegRoundTripBatch(images, 10).map(imageToBytes);
    images.forEach((image, i) =>
      expect(Buffer.from(imageToBytes(jpegRoundTripBatch([image], 10)[0]!)).equals(Buffer.from(batched[i]!))).toBe(
        true,
      ),
    );
    const seeds = images.map((_, i) => i);
    const viaBatch = corruptBatch(images, 'gaussian_noise', 2, seeds).map(imageToBytes);
    images.forEach((image, i) =>
      expect(
        Buffer.from(imageToBytes(applyCorruption(image, { name: 'gaussian_noise', severity: 2, seed: i }))).equals(
          Buffer.from(viaBatch[i]!),
        ),
      ).toBe(true),
    );
  });
});

describe('corruption schedules', () => {
  it('step 1 -> 5 -> 1 at given frames, with the continuous value and a per-frame seed recorded', () => {
    const schedule = parseCorruptionSchedule({
      kind: 'step',
      corruption: 'shot_noise',
      levels: [
        { atFrame: 0, severity: 1 },
        { atFrame: 100, severity: 5 },
        { atFrame: 200, severity: 1 },
      ],
    });
    expect([0, 99, 100, 199, 200].map((n) => corruptionAt(schedule, n, 3).severity)).toEqual([1, 1, 5, 5, 1]);
    const frame = corruptionAt(schedule, 150, 3);
    expect(frame).toMatchObject({ corruption: 'shot_noise', severity: 5, continuousSeverity: 5 });
    expect(corruptionAt(schedule, 151, 3).seed).not.toBe(frame.seed);
    expect(corruptionAt(schedule, 150, 3).seed).toBe(frame.seed);
  });
  it('ramp and sine round the continuous severity; severity 0 is a clean frame', () => {
    const ramp = parseCorruptionSchedule({
      kind: 'ramp',
      corruption: 'fog',
      fromSeverity: 0,
      toSeverity: 5,
      startFrame: 0,
      endFrame: 100,
    });
    expect(corruptionAt(ramp, 0, 0)).toMatchObject({ corruption: null, severity: 0 });
    expect(corruptionAt(ramp, 50, 0)).toMatchObject({ severity: 3, continuousSeverity: 2.5 });
    const sine = parseCorruptionSchedule({
      kind: 'sine',
      corruption: 'gaussian_blur',
      mean: 2.5,
      amplitude: 2.5,
      frequencyHz: 0.5,
      frameRateHz: 30,
    });
    const quarter = corruptionAt(sine, 15, 0);
    expect(quarter.continuousSeverity).toBeCloseTo(5, 12);
    expect(quarter.severity).toBe(5);
    expect(corruptionAt(sine, 45, 0).severity).toBe(0);
  });
  it('random switching is piecewise constant and reproducible', () => {
    const random = parseCorruptionSchedule({
      kind: 'random',
      corruptions: ['fog', 'contrast', 'pixelate'],
      holdFrames: 30,
    });
    const frames = Array.from({ length: 300 }, (_, n) => corruptionAt(random, n, 11));
    expect(
      frames.slice(0, 30).every((f) => f.corruption === frames[0]!.corruption && f.severity === frames[0]!.severity),
    ).toBe(true);
    expect(new Set(frames.map((f) => `${f.corruption}${f.severity}`)).size).toBeGreaterThan(3);
    expect(Array.from({ length: 300 }, (_, n) => corruptionAt(random, n, 11))).toEqual(frames);
  });
  it('random switching draws severities between its least and its most; one severity when they are equal', () => {
    const draw = (minSeverity: number, maxSeverity: number) => {
      const schedule = parseCorruptionSchedule({
        kind: 'random',
        corruptions: ['fog'],
        holdFrames: 1,
        minSeverity,
        maxSeverity,
      });
      return new Set(Array.from({ length: 400 }, (_, n) => corruptionAt(schedule, n, 5).severity));
    };
    expect(draw(0, 5)).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    expect(draw(3, 4)).toEqual(new Set([3, 4]));
    expect(draw(5, 5)).toEqual(new Set([5]));
    expect(() =>
      parseCorruptionSchedule({ kind: 'random', corruptions: ['fog'], holdFrames: 1, minSeverity: 4, maxSeverity: 2 }),
    ).toThrow(/minSeverity.*must be at most maxSeverity|must be at most maxSeverity/);
  });
  it('a bad schedule is a typed error naming the field', () => {
    expect(() => parseCorruptionSchedule({ kind: 'constant', corruption: 'snow', severity: 2 })).toThrow(/corruption/);
  });
});
