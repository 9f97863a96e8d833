/**
 * Issue 29: with many classes the tuning pool's threads build the fused-score tables together
 * (src-main/core/tuning/tuning-pool.ts), reading a chunk's rows where the trace keeps its logits in
 * shared memory (a trace read from a file: no copy on the event loop) and from a copy of the rows
 * otherwise (a recording's trace). Either way the tune is exactly the one computed in process, a
 * long recording's screened search too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { parseTuningRequest, tune, usesFusedTables, type TuningResult } from '../../src-shared/tuning';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { tuneOnThreads } from '../../src-main/core/tuning/tuning-pool';
import type { TuningWorkerRequest } from '../../src-main/core/tuning/tuning-worker';
import { ThreadChannel } from '../../src-main/core/workers/worker-channel';
import { UNKNOWN_LABEL } from '../../src-shared/trace/trace';
import { syntheticTrace } from '../support/synthetic-trace';

/** What a tune answers, without how long it took or on how many threads. */
function answerOf(result: TuningResult & { threads?: number; wallMs?: number }): TuningResult {
  const { threads: _threads, wallMs: _wallMs, ...answer } = result;
  return answer;
}

describe('the tuning pool on a many-class trace', () => {
  it('reads the rows in shared memory for a trace read from a file, copies them otherwise, and tunes as in process', async () => {
    // more frames than two of the pool's 2,048-frame chunks, every seventh unlabelled: a chunk's rows
    // are neither its own indices nor consecutive
    const recorded = syntheticTrace({ frames: 5000, classCount: 64, seed: 11 });
    for (let i = 0; i < recorded.frameCount; i += 7) recorded.labels![i] = UNKNOWN_LABEL;
    const folder = mkdtempSync(join(tmpdir(), 'knob-tuning-pool-'));
    const path = join(folder, 'trace.arrow');
    writeFileSync(path, encodeTraceFile(recorded, null));
    const fromFile = (await readTraceFile(path)).trace;
    expect(fromFile.zStatic.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(recorded.zStatic.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    const request = parseTuningRequest({});
    expect(usesFusedTables(request.metric, fromFile.classCount)).toBe(true);
    const current = { settings: DEFAULT_GATE_SETTINGS, temperature: 1 };
    const inProcess = answerOf(await tune(fromFile, request, current));
    expect(inProcess.evaluations).toBeGreaterThan(100);
    // which way the rows went: the table requests the threads were sent
    const sent: TuningWorkerRequest[] = [];
    const original = ThreadChannel.prototype.call;
    const call = vi.spyOn(ThreadChannel.prototype, 'call').mockImplementation(function (
      this: ThreadChannel<unknown, unknown>,
      ...args: Parameters<typeof original>
    ) {
      sent.push(args[0] as TuningWorkerRequest);
      return original.apply(this, args);
    });
    try {
      expect(answerOf(await tuneOnThreads(fromFile, request, current, { threads: 2 }))).toEqual(inProcess);
      const shared = sent.filter((r) => r.kind === 'table');
      expect(shared.length).toBeGreaterThan(2);
      expect(
        shared.every(
          (r) => r.kind === 'table' && r.logitRows === 'trace' && r.zStatic.buffer === fromFile.zStatic.buffer,
        ),
      ).toBe(true);
      sent.length = 0;
      expect(answerOf(await tuneOnThreads(recorded, request, current, { threads: 2 }))).toEqual(inProcess);
      expect(sent.filter((r) => r.kind === 'table').every((r) => r.kind === 'table' && r.logitRows === 'chunk')).toBe(
        true,
      );
    } finally {
      call.mockRestore();
      rmSync(folder, { recursive: true, force: true });
    }
  }, 120_000);

  it("screens a long recording's search on the threads as in process: the grid on the stride, the best confirmed on every frame", async () => {
    // many classes (the threads' tables) and a ten-class trace (their row scorer), screening lowered
    for (const classCount of [64, 10]) {
      const trace = syntheticTrace({ frames: 3000, classCount, seed: 5 });
      const request = parseTuningRequest({
        zeta: { points: 6 },
        wnRadPerSec: { points: 6 },
        screening: { aboveFrames: 1_000, frames: 400, confirmed: 5 },
      });
      const current = { settings: DEFAULT_GATE_SETTINGS, temperature: 1 };
      const inProcess = answerOf(await tune(trace, request, current));
      expect(inProcess.screenedFrameCount).toBe(350);
      expect(inProcess.confirmed).toHaveLength(5);
      expect(answerOf(await tuneOnThreads(trace, request, current, { threads: 2 }))).toEqual(inProcess);
    }
  }, 120_000);
});
