/**
 * The O(1)-per-frame fused scores (src-shared/fusion/fused-score-table.ts) against the full-vector
 * replay they stand in for: the logits fused at each frame's gate (fuseRowInto), divided by the
 * temperature, scored by the metric suite's own row pass (scoreRowsInto). Top-1 must be identical;
 * confidence, NLL and Brier terms within 1e-12 (absolute, or relative to the NLL) on every frame,
 * for K in {2, 10, 100, 1000}, branches near and far apart, ties, float32 logits, gates at and
 * beyond the ends of [0, 1], and temperatures.
 */
import { describe, expect, it } from 'vitest';
import { fuseRowInto } from '../../src-shared/fusion/convex-fusion';
import { termsFor } from '../../src-shared/fusion/exponential-series';
import {
  FusedScoreTable,
  labelLogitsOf,
  type BranchLogits,
  type FusedFrameScores,
} from '../../src-shared/fusion/fused-score-table';
import { allocateTopLabelScores, scoreRowsInto } from '../../src-shared/metrics/scores';
import { normalDraw, seededRandom } from '../../src-shared/random';

interface Case {
  name: string;
  classCount: number;
  frames: number;
  /** Spread of the static logits and of the dynamic branch around them. */
  scale: number;
  difference: number;
  temperature?: number;
  ties?: boolean;
}

function logitsOf(c: Case, seed: number): BranchLogits {
  const random = seededRandom(seed);
  const n = c.frames * c.classCount;
  const zStatic = new Float32Array(n);
  const zDyn = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    zStatic[i] = c.scale * normalDraw(random);
    zDyn[i] = zStatic[i]! + c.difference * normalDraw(random);
    // ties: quantised logits, so equal values (and equal fused values) are common
    if (c.ties) {
      zStatic[i] = Math.round(zStatic[i]!);
      zDyn[i] = Math.round(zDyn[i]!);
    }
  }
  return { zStatic, zDyn, classCount: c.classCount };
}

function gatesOf(frames: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const g = new Float64Array(frames);
  // the ends, beyond them (clamped), and the interior
  const fixed = [0, 1, -0.25, 1.5, 0.5];
  for (let i = 0; i < frames; i++) g[i] = i < fixed.length ? fixed[i]! : random();
  return g;
}

function exactScores(logits: BranchLogits, g: Float64Array, labels: Int32Array, temperature: number) {
  const { classCount: k } = logits;
  const n = g.length;
  const fused = new Float64Array(n * k);
  for (let i = 0; i < n; i++) {
    fuseRowInto(logits.zStatic, logits.zDyn, i * k, k, g[i]!, fused, i * k);
    if (temperature !== 1) for (let c = i * k; c < (i + 1) * k; c++) fused[c]! /= temperature;
  }
  const out = {
    probabilities: new Float64Array(n * k),
    sampleNll: new Float64Array(n),
    sampleBrier: new Float64Array(n),
    top: allocateTopLabelScores(n),
  };
  scoreRowsInto(fused, labels, k, 0, n, out);
  return out;
}

/** The table's per-frame outputs for `n` frames, to be filled by scoresInto. */
const frameScores = (n: number): FusedFrameScores => ({
  ...allocateTopLabelScores(n),
  sampleNll: new Float64Array(n),
  sampleBrier: new Float64Array(n),
});

const CASES: Case[] = [
  { name: 'K = 2', classCount: 2, frames: 400, scale: 3, difference: 2 },
  // enough frames that the candidate and series stores grow several times
  { name: 'K = 10', classCount: 10, frames: 5000, scale: 3, difference: 2 },
  { name: 'K = 10, branches far apart', classCount: 10, frames: 200, scale: 8, difference: 30 },
  { name: 'K = 10, equal branches', classCount: 10, frames: 100, scale: 3, difference: 0 },
  { name: 'K = 10, quantised logits (ties)', classCount: 10, frames: 300, scale: 2, difference: 1, ties: true },
  { name: 'K = 100', classCount: 100, frames: 200, scale: 4, difference: 3 },
  { name: 'K = 100, temperature 2.5', classCount: 100, frames: 100, scale: 4, difference: 3, temperature: 2.5 },
  { name: 'K = 1000 (ImageNet-like spread)', classCount: 1000, frames: 60, scale: 3, difference: 2 },
  { name: 'K = 1000, branches far apart', classCount: 1000, frames: 30, scale: 6, difference: 25 },
  { name: 'K = 1000, temperature 0.5', classCount: 1000, frames: 30, scale: 3, difference: 2, temperature: 0.5 },
  // exponents spread over more than exp can hold (x up to thousands): the pieces' sum in log space
  {
    name: 'K = 10, branches thousands apart',
    classCount: 10,
    frames: 60,
    scale: 50,
    difference: 600,
    temperature: 0.5,
  },
];

describe('fused scores from the per-frame table equal the full-vector replay', () => {
  for (const [index, c] of CASES.entries()) {
    it(c.name, () => {
      const logits = logitsOf(c, 17 + index);
      const g = gatesOf(c.frames, 99 + index);
      const random = seededRandom(5 + index);
      const labels = Int32Array.from({ length: c.frames }, () => Math.floor(random() * c.classCount));
      const temperature = c.temperature ?? 1;
      const exact = exactScores(logits, g, labels, temperature);

      const table = new FusedScoreTable(c.classCount, temperature);
      // built in two steps, as a growing recording extends it
      table.extend(logits, Math.floor(c.frames / 3));
      table.extend(logits, c.frames);
      expect(table.entryCount).toBe(c.frames);
      const frames = Int32Array.from({ length: c.frames }, (_, i) => i);
      const out = frameScores(c.frames);
      table.scoresInto(labelLogitsOf(logits, frames, labels), g, frames, labels, out);
      let worst = 0;
      for (let i = 0; i < c.frames; i++) {
        expect(out.predicted[i], `frame ${i}`).toBe(exact.top.predicted[i]);
        expect(out.correct[i]).toBe(exact.top.correct[i]);
        const nllError = Math.abs(out.sampleNll[i]! - exact.sampleNll[i]!) / Math.max(1, exact.sampleNll[i]!);
        worst = Math.max(
          worst,
          Math.abs(out.confidence[i]! - exact.top.confidence[i]!),
          nllError,
          Math.abs(out.sampleBrier[i]! - exact.sampleBrier[i]!),
        );
      }
      expect(worst).toBeLessThan(1e-12);

      // the replay's top-1 and confidence of every frame (labelled or not)
      const top1 = new Int32Array(c.frames);
      const confidence = new Float64Array(c.frames);
      table.topInto(g, 0, c.frames, top1, confidence);
      expect(Array.from(top1)).toEqual(Array.from(exact.top.predicted));
      for (let i = 0; i < c.frames; i++)
        expect(Math.abs(confidence[i]! - exact.top.confidence[i]!)).toBeLessThan(1e-12);
    });
  }

  it("a table of some rows only (the tuner's evaluation frames) scores those rows", () => {
    const c = CASES[5]!;
    const logits = logitsOf(c, 23);
    const g = gatesOf(c.frames, 24);
    const rows = Int32Array.from({ length: Math.floor(c.frames / 3) }, (_, j) => 3 * j + 1);
    const random = seededRandom(25);
    const allLabels = Int32Array.from({ length: c.frames }, () => Math.floor(random() * c.classCount));
    const exact = exactScores(logits, g, allLabels, 1);
    const table = new FusedScoreTable(c.classCount);
    table.extend(logits, rows);
    const entries = Int32Array.from({ length: rows.length }, (_, j) => j);
    const labels = Int32Array.from(rows, (row) => allLabels[row]!);
    const n = rows.length;
    const out = frameScores(n);
    table.scoresInto(labelLogitsOf(logits, rows, labels), g, entries, labels, out);
    for (let j = 0; j < n; j++) {
      const row = rows[j]!;
      expect(out.predicted[j]).toBe(exact.top.predicted[row]);
      expect(Math.abs(out.sampleNll[j]! - exact.sampleNll[row]!)).toBeLessThan(1e-12);
      expect(Math.abs(out.sampleBrier[j]! - exact.sampleBrier[row]!)).toBeLessThan(1e-12);
    }
  });

  it('tables built over shares of the rows and merged (into shared memory) score as one table', () => {
    const c = CASES[5]!;
    const logits = logitsOf(c, 31);
    const g = gatesOf(c.frames, 32);
    const random = seededRandom(33);
    const labels = Int32Array.from({ length: c.frames }, () => Math.floor(random() * c.classCount));
    const whole = new FusedScoreTable(c.classCount, 1.5);
    whole.extend(logits, c.frames);
    const half = Math.floor(c.frames / 2);
    const first = new FusedScoreTable(c.classCount, 1.5);
    first.extend(
      logits,
      Int32Array.from({ length: half }, (_, i) => i),
    );
    const second = new FusedScoreTable(c.classCount, 1.5);
    second.extend(
      logits,
      Int32Array.from({ length: c.frames - half }, (_, i) => half + i),
    );
    const merged = FusedScoreTable.merge(
      c.classCount,
      1.5,
      [first.parts(), second.parts()],
      (bytes) => new SharedArrayBuffer(bytes),
    );
    expect(merged.entryCount).toBe(c.frames);
    const entries = Int32Array.from({ length: c.frames }, (_, i) => i);
    const score = (table: FusedScoreTable) => {
      const out = frameScores(c.frames);
      table.scoresInto(labelLogitsOf(logits, entries, labels), g, entries, labels, out);
      return out;
    };
    expect(score(merged)).toEqual(score(whole));
  });

  it('stores fewer values per frame than the 2 K logits at K = 1000', () => {
    const c = CASES[7]!;
    const table = new FusedScoreTable(c.classCount);
    table.extend(logitsOf(c, 3), c.frames);
    expect(table.valuesPerEntry).toBeLessThan((2 * c.classCount) / 4);
  });
});

describe('the exponential series length', () => {
  it('is the fewest terms whose Poisson tail is below 1e-13', () => {
    // P(Poisson(r) > M) summed term by term above M (1 - cdf would only see rounding), against the
    // bound; a few terms fewer would not meet it
    const tail = (r: number, m: number) => {
      let sum = 0;
      for (let j = m + 1; j < m + 400; j++) {
        let logPmf = -r + j * Math.log(r);
        for (let i = 2; i <= j; i++) logPmf -= Math.log(i);
        sum += Math.exp(logPmf);
      }
      return sum;
    };
    for (const r of [0.5, 1, 4, 10, 20, 40]) {
      const m = termsFor(r);
      expect(tail(r, m)).toBeLessThanOrEqual(1e-13);
      expect(tail(r, m - 2)).toBeGreaterThan(1e-13);
    }
    expect(termsFor(0)).toBe(0);
  });
});
