/**
 * The Knob heads fit off the caller's thread (issue 31; issue 28's one worker protocol): the static
 * and dynamic heads on two threads at once, then the gate network, with the real worker entry
 * (out/main/heads-worker.js). The heads are those of the fit on one thread, to the bit; the caller's
 * event loop keeps turning while the threads work (the desk's backend answers its other calls and
 * its cancel); a cancel, or one branch's failure, answers at once and ends every thread (seen
 * through this process's CPU time going quiet, within a bounded wait).
 */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../src-shared/errors';
import { fitKnobHeads } from '../../src-shared/heads/knob-heads';
import { fitKnobHeadsOnThreads } from '../../src-main/core/use-cases/heads-threads';
import { syntheticBackboneFeatures } from '../support/synthetic-features';

// wider than GATE_FULL_WIDTH (256): the gate stage takes the dominant-subspace path too
const data = syntheticBackboneFeatures(2000, 300, 10, 5);
/** Wide rows whose branch heads take seconds to fit (made once, for the tests that stop them). */
let wideRows: ReturnType<typeof syntheticBackboneFeatures> | null = null;
const wide = () => (wideRows ??= syntheticBackboneFeatures(40_000, 1024, 10, 6));

/** Waits (at most `seconds`) for a second in which this process's threads used under 0.4 s of CPU. */
async function threadsGoQuiet(seconds: number): Promise<void> {
  for (let attempt = 0; attempt < seconds; attempt++) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1e6 < 0.4) return;
  }
  throw new Error(`the fit threads were still busy ${seconds} s after the fit ended`);
}

/** The error a promise rejects with (null when it resolves). */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (caught: unknown) => caught,
  );

describe('the Knob heads fitted on threads', () => {
  it('gives the heads of the one-thread fit, to the bit, while the caller goes on', async () => {
    const stages: string[] = [];
    let turns = 0;
    let turning = true;
    const turn = (): void => {
      if (!turning) return;
      turns++;
      setTimeout(turn, 5);
    };
    turn();
    const threaded = await fitKnobHeadsOnThreads(data, {
      seed: 3,
      onProgress: (stage, done, total) => stages.push(`${stage} ${done}/${total}`),
    });
    turning = false;
    const turnsDuringFit = turns;
    const alone = fitKnobHeads(data, { seed: 3 });
    expect(threaded.heads).toEqual(alone.heads);
    expect(threaded.steps).toEqual(alone.steps);
    expect(threaded.train).toEqual(alone.train);
    expect(threaded.validation).toEqual(alone.validation);
    // each stage named as it starts, as on one thread: the branches' stage until both have ended
    expect(stages).toEqual([
      'static and dynamic heads (two threads) 0/3',
      'static and dynamic heads (two threads) 1/3',
      'gate target network 2/3',
      'gate target network 3/3',
    ]);
    // the fit on one thread holds the loop for its whole length; on threads the loop went on turning
    expect(turnsDuringFit).toBeGreaterThan(10);
  }, 120_000);

  it("refuses too few corrupted frames with the one-thread fit's typed error, from the threads", async () => {
    const clean = { ...data, severity: new Float64Array(data.severity.length) };
    const error = await rejection(fitKnobHeadsOnThreads(clean, { seed: 3 }));
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).code).toBe('INVALID_INPUT');
    expect((error as KnobError).message).toMatch(/100 clean and 100 corrupted .* these have \d+ and 0/);
  }, 60_000);

  it('answers a cancel during the branches with CANCELLED, and both threads end', async () => {
    const controller = new AbortController();
    const stages: string[] = [];
    const fit = fitKnobHeadsOnThreads(wide(), {
      seed: 3,
      signal: controller.signal,
      // each branch fits for seconds on these rows: one second in, neither has ended (on a loaded
      // machine the threads may still be standardising their rows; the cancel must end them either way)
      onProgress: (stage, done, total) => {
        stages.push(`${stage} ${done}/${total}`);
        if (done === 0) setTimeout(() => controller.abort(), 1000);
      },
    });
    const error = await rejection(fit);
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).code).toBe('CANCELLED');
    // stopped while the branches fitted: no branch had ended
    expect(stages).toEqual(['static and dynamic heads (two threads) 0/3']);
    // within two seconds: the fit had several more to go (the gate network alone takes longer)
    await threadsGoQuiet(2);
  }, 60_000);

  it("one branch's failure answers with its error and ends the other branch's thread", async () => {
    // the dynamic head's teacher is not a number: its soft targets are refused before it fits,
    // while the static head, on 16,000 rows of 1,024 features, has seconds of fitting ahead of it
    const rows = wide();
    const recordedDynamic = Float32Array.from(rows.recordedDynamic, (z, at) => (at % rows.classCount === 0 ? NaN : z));
    const error = await rejection(fitKnobHeadsOnThreads({ ...rows, recordedDynamic }, { seed: 3 }));
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).message).toMatch(/soft target NaN of row \d+ is not a probability/);
    // within two seconds: the static head alone has several more to fit here
    await threadsGoQuiet(2);
  }, 60_000);
});
