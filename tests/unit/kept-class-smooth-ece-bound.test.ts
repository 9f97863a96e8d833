/**
 * SmoothECE's stated bound for a kept-class trace (kept-class-smooth-ece-bound.ts) against full
 * traces realised anywhere in the frames' ranges: at their ends, mixed, with unsettled frames
 * right or wrong anywhere, with frames in the grid's first and last cells (where the mirrored
 * kernel's mass jumps), and where a shift of 1e-9 sends relplot's bandwidth search down another
 * branch, so the value moves by a bandwidth step and not by the frames' ranges.
 */
import { describe, expect, it } from 'vitest';
import { keptClassMetricBounds } from '../../src-shared/metrics/kept-class-bounds';
import { smoothEceBound } from '../../src-shared/metrics/kept-class-smooth-ece-bound';
import {
  forEachReachableBandwidth,
  gridProviderFromSamples,
  smoothEce,
  smoothEceBandwidth,
} from '../../src-shared/metrics/smooth-ece';
import { seededRandom } from '../../src-shared/random';

interface Frame {
  c: number;
  y: number;
  up: number;
  /** The top-1 is unsettled: the full trace's confidence and correctness may be anything. */
  unsettled?: boolean;
}

function boundOf(frames: Frame[]): { estimate: number; bound: number } {
  const n = frames.length;
  const top = {
    confidence: Float64Array.from(frames, (f) => f.c),
    predicted: new Int32Array(n),
    correct: Uint8Array.from(frames, (f) => f.y),
  };
  const bounds = keptClassMetricBounds(top, {
    confidenceUp: Float64Array.from(frames, (f) => f.up),
    confidenceDown: new Float64Array(n),
    nll: new Float64Array(n),
    brier: new Float64Array(n),
    uncertainTop1: Uint8Array.from(frames, (f) => (f.unsettled === true ? 1 : 0)),
  });
  return { estimate: smoothEce(top.confidence, top.correct).value.value, bound: bounds.smoothEce() };
}

const smoothEceOf = (confidence: number[], correct: number[]): number =>
  smoothEce(Float64Array.from(confidence), Uint8Array.from(correct)).value.value;

/** Frames miscalibrated the way classifiers are (over-confident), ranges up to `widest`. */
function framesOf(n: number, seed: number, widest: number, edges = false): Frame[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => {
    const c = edges && i % 4 === 0 ? (i % 8 === 0 ? 1 - 1e-4 * random() : 1e-4 * random()) : 0.3 + 0.7 * random();
    const y = random() < c * 0.85 ? 1 : 0;
    return { c, y, up: Math.min(1 - c, widest * random()), unsettled: i % 97 === 5 };
  });
}

describe('SmoothECE of a kept-class trace', () => {
  it('relplot search: a known predicate reaches one end, an unknown one every end', () => {
    // smECE 0.3 at every bandwidth: the search ends at the least multiple of 2^-10 not below it
    const ends: number[] = [];
    forEachReachableBandwidth(
      (s) => s < 0.3,
      (s) => ends.push(s),
    );
    expect(ends).toEqual([308 / 1024]);
    const random = seededRandom(3);
    const confidence = Float64Array.from({ length: 500 }, () => random());
    const correct = Uint8Array.from(confidence, (c) => (random() < c * c ? 1 : 0));
    const { sigma, value } = smoothEce(confidence, correct);
    expect(smoothEceBandwidth(gridProviderFromSamples(confidence, correct))).toBe(sigma);
    expect(value.value).toBeLessThanOrEqual(sigma);
    const every: number[] = [];
    forEachReachableBandwidth(
      () => 'either',
      (s) => every.push(s),
      undefined,
      0,
    );
    // 1 at once, then every other multiple of 2^-10 in (0, 1) as the upper end of the last step,
    // each once
    expect(every).toHaveLength(1024);
    expect(new Set(every).size).toBe(1024);
    expect(Math.min(...every)).toBe(2 ** -10);
  });

  it('holds for full traces at the ends of every range, mixed, and with unsettled frames anywhere', () => {
    let checked = 0;
    let farthest = 0;
    for (const [seed, widest, edges] of [
      [1, 1e-6, false],
      [2, 1e-3, true],
      [3, 0.05, false],
      [4, 0.02, true],
    ] as const) {
      const frames = framesOf(400, seed, widest, edges);
      const { estimate, bound } = boundOf(frames);
      expect(bound).toBeLessThan(1);
      const random = seededRandom(seed + 100);
      const realisations: Array<(f: Frame, i: number) => [number, number]> = [
        (f) => [f.c + f.up, f.y],
        (f, i) => [i % 2 === 0 ? f.c + f.up : f.c, f.y],
        (f) => [f.c + f.up * random(), f.y],
        (f) => (f.c > 0.7 ? [f.c + f.up, f.y] : [f.c, f.y]),
      ];
      for (const at of realisations) {
        for (const unsettledAs of [0, 1]) {
          const full = frames.map((f, i): [number, number] =>
            f.unsettled === true ? [unsettledAs === 1 ? 1 - f.c : random(), 1 - f.y] : at(f, i),
          );
          const gap = Math.abs(
            smoothEceOf(
              full.map(([c]) => c),
              full.map(([, y]) => y),
            ) - estimate,
          );
          expect(gap, `seed ${seed}`).toBeLessThanOrEqual(bound);
          farthest = Math.max(farthest, gap / bound);
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * 4 * 2);
    // not vacuous: some realisation uses a good part of its bound
    expect(farthest).toBeGreaterThan(0.05);
  });

  it('counts the kernel moving with the frames: residuals that cancel, pulled 1e-3 apart', () => {
    // 200 wrong frames and 200 right ones at the same confidence (or 0.1 apart): their smoothed
    // residuals cancel; moving the wrong ones up by 1e-3 uncovers a bump 13 times that
    for (const [wrongAt, rightAt, farMoreThanWidth] of [
      [0.5, 0.5, true],
      [0.45, 0.55, false],
    ] as const) {
      const frames: Frame[] = [
        ...Array.from({ length: 200 }, () => ({ c: wrongAt, y: 0, up: 1e-3 })),
        ...Array.from({ length: 200 }, () => ({ c: rightAt, y: 1, up: 0 })),
      ];
      const { estimate, bound } = boundOf(frames);
      const full = smoothEceOf(
        frames.map((f) => f.c + f.up),
        frames.map((f) => f.y),
      );
      const gap = Math.abs(full - estimate);
      expect(gap, `wrong at ${wrongAt}`).toBeLessThanOrEqual(bound);
      if (farMoreThanWidth) expect(gap).toBeGreaterThan(10 * 1e-3);
    }
  });

  it('past its work budget a bandwidth counts as either way, not as the predicate false', () => {
    // found by review: 1,000 frames at 0.5, right and wrong in turn (SmoothECE 0), and 20
    // unsettled ones; the full trace with the unsettled frames wrong at 0.9 has SmoothECE 0.0176.
    // With the budget spent from sigma = 1/32 on, a fallback range of [0, sigma] decided every
    // later step "not below smECE" and stated 0.00195.
    const frames: Frame[] = [
      ...Array.from({ length: 1000 }, (_, i) => ({ c: 0.5, y: i % 2, up: 0 })),
      ...Array.from({ length: 20 }, (_, i) => ({ c: 0.5, y: i % 2, up: 0, unsettled: true })),
    ];
    const n = frames.length;
    const top = {
      confidence: Float64Array.from(frames, (f) => f.c),
      predicted: new Int32Array(n),
      correct: Uint8Array.from(frames, (f) => f.y),
    };
    const frameBounds = {
      confidenceUp: new Float64Array(n),
      confidenceDown: new Float64Array(n),
      nll: new Float64Array(n),
      brier: new Float64Array(n),
      uncertainTop1: Uint8Array.from(frames, (f) => (f.unsettled === true ? 1 : 0)),
    };
    const full = smoothEceOf(
      frames.map((f) => (f.unsettled === true ? 0.9 : f.c)),
      frames.map((f) => (f.unsettled === true ? 0 : f.y)),
    );
    const estimate = smoothEceOf(
      frames.map((f) => f.c),
      frames.map((f) => f.y),
    );
    expect(full - estimate).toBeGreaterThan(0.015);
    for (const budget of [0, 1_001_010, 3_000_000, undefined]) {
      const bound = smoothEceBound(top, frameBounds, budget);
      expect(full - estimate, `budget ${budget}`).toBeLessThanOrEqual(bound);
    }
  });

  it('follows the bandwidth search where a shift of 1e-9 sends it down another branch', () => {
    // every confidence shifted by t: find t where relplot's bandwidth changes, to 1e-9
    const random = seededRandom(9);
    const base = Array.from({ length: 300 }, () => 0.2 + 0.6 * random());
    const correct = base.map((c) => (random() < c - 0.15 ? 1 : 0));
    const bandwidthAt = (t: number) =>
      smoothEceBandwidth(
        gridProviderFromSamples(
          Float64Array.from(base, (c) => c + t),
          Uint8Array.from(correct),
        ),
      );
    let [a, b] = [0, 0.1];
    expect(bandwidthAt(a)).not.toBe(bandwidthAt(b));
    while (b - a > 1e-9) {
      const mid = (a + b) / 2;
      if (bandwidthAt(mid) === bandwidthAt(a)) a = mid;
      else b = mid;
    }
    const frames = base.map((c, i) => ({ c: c + a, y: correct[i]!, up: b - a }));
    const { estimate, bound } = boundOf(frames);
    const full = smoothEceOf(
      base.map((c) => c + b),
      correct,
    );
    const gap = Math.abs(full - estimate);
    // the value moves with the bandwidth (one step of 2^-10), far more than ranges of 1e-9 move it
    // at one sigma (about (1 + 0.8 / sigma) 1e-9, 7e-9 here)
    expect(bandwidthAt(b) - bandwidthAt(a)).toBe(2 ** -10);
    expect(gap).toBeGreaterThan(100 * (b - a));
    expect(gap).toBeLessThanOrEqual(bound);
  });
});
