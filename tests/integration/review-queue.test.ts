/**
 * Issue 30, the review queue: on a recording of the shipped model (the embedded stream drifting
 * into shot_noise, held out of training) with only 60 random frames of a 2,000-frame window
 * labelled, labelling the queue's first 50 frames narrows the window's ECE interval more than
 * labelling 50 frames at random, averaged over ten seeds; and `knob review` queues only unlabelled
 * frames of the window, each with its reason and narrowing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { seededRandom } from '../../src-shared/random';
import { reviewQueue, stratifiedBins, stratifiedEceInterval, UNLABELLED_OUTCOME } from '../../src-shared/review';
import { replay } from '../../src-shared/trace/replay';
import { UNKNOWN_LABEL, type Trace } from '../../src-shared/trace/trace';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, steppedCorruptionRun } from '../support/knob-cli';

const dir = mkdtempSync(join(tmpdir(), 'knob-review-'));
const WINDOW = { start: 1000, end: 3000 };
const START_LABELLED = 60;
const ADDED = 50;
let trace: Trace;
let confidence: Float64Array;
let truth: Int8Array;

beforeAll(async () => {
  await steppedCorruptionRun(join(dir, 'run'), 'shot_noise', 3000, '0:0,1000:2,2000:4');
  trace = (await readTraceFile(join(dir, 'run', 'trace.arrow'))).trace;
  const replayed = replay(trace, DEFAULT_GATE_SETTINGS);
  confidence = replayed.confidence.slice(WINDOW.start, WINDOW.end);
  truth = Int8Array.from(confidence, (_, j) =>
    replayed.top1[WINDOW.start + j] === trace.labels![WINDOW.start + j] ? 1 : 0,
  );
}, 120_000);

/** `count` distinct indices of the window that `outcome` leaves unlabelled, drawn with `random`. */
function randomUnlabelled(outcome: Int8Array, count: number, random: () => number): number[] {
  const pool = [...outcome.keys()].filter((j) => outcome[j] === UNLABELLED_OUTCOME);
  for (let j = pool.length - 1; j > 0; j--) {
    const k = Math.floor(random() * (j + 1));
    [pool[j], pool[k]] = [pool[k]!, pool[j]!];
  }
  return pool.slice(0, count);
}

function widthWith(outcome: Int8Array, revealed: number[]): number {
  const after = Int8Array.from(outcome);
  for (const j of revealed) after[j] = truth[j]!;
  const { low, high } = stratifiedEceInterval(stratifiedBins({ confidence, outcome: after }).bins, {
    draws: 4000,
    seed: 7,
  });
  return high - low;
}

describe('the review queue', () => {
  it(`labelling its first ${ADDED} frames narrows the ECE interval more than ${ADDED} at random`, () => {
    const queued: number[] = [];
    const random: number[] = [];
    for (let seed = 1; seed <= 10; seed++) {
      const draw = seededRandom(seed);
      const outcome = new Int8Array(confidence.length).fill(UNLABELLED_OUTCOME);
      for (const j of randomUnlabelled(outcome, START_LABELLED, draw)) outcome[j] = truth[j]!;
      const queue = reviewQueue({ confidence, outcome }, ADDED);
      expect(queue).toHaveLength(ADDED);
      expect(queue.every((q) => outcome[q.frame] === UNLABELLED_OUTCOME && q.narrowing > 0)).toBe(true);
      queued.push(
        widthWith(
          outcome,
          queue.map((q) => q.frame),
        ),
      );
      random.push(widthWith(outcome, randomUnlabelled(outcome, ADDED, draw)));
    }
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    console.log(
      `[review] ECE interval width after ${ADDED} more labels, mean of 10 seeds: queue ${mean(queued).toFixed(4)}, ` +
        `random ${mean(random).toFixed(4)} (queue narrower in ${queued.filter((w, i) => w < random[i]!).length} of 10)`,
    );
    expect(mean(queued)).toBeLessThan(mean(random));
  });

  it('knob review queues unlabelled frames of the window, each with its reason and narrowing', async () => {
    const labels = Int32Array.from(trace.labels!, (label, i) => (i % 10 === 0 ? label : UNKNOWN_LABEL));
    const partial = join(dir, 'partial.arrow');
    writeFileSync(partial, encodeTraceFile({ ...trace, labels }, null));
    const result = await knob('review', partial, '--window', '1000:3000', '--count', '12', '--json');
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      labelledFrames: number;
      ece: { value: number; low: number; high: number };
      queue: Array<{ frame: number; reason: string; narrowing: number }>;
    };
    expect(report.labelledFrames).toBe(200);
    expect(report.ece.low).toBeLessThanOrEqual(report.ece.value);
    expect(report.ece.high).toBeGreaterThanOrEqual(report.ece.value);
    expect(report.queue).toHaveLength(12);
    for (const q of report.queue) {
      expect(q.frame).toBeGreaterThanOrEqual(1000);
      expect(q.frame).toBeLessThan(3000);
      expect(q.frame % 10, 'a labelled frame was queued').not.toBe(0);
      expect(q.narrowing).toBeGreaterThan(0);
      expect(q.reason).toMatch(/confidence bin/);
    }
  });
});
