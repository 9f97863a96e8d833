import { GCProfiler } from 'node:v8';

export interface Timing {
  bestMs: number;
  medianMs: number;
  /** Garbage collections seen while the measured runs ran: 0 means no per-frame allocation. */
  gcEvents: number;
}

/** Runs `body` `warmup + repeats` times; reports the best and median of the measured runs. */
export function time(body: () => void, repeats = 7, warmup = 2): Timing {
  for (let i = 0; i < warmup; i++) body();
  const samples: number[] = [];
  const profiler = new GCProfiler();
  profiler.start();
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    body();
    samples.push(performance.now() - started);
  }
  const gcEvents = profiler.stop()?.statistics.length ?? 0;
  samples.sort((a, b) => a - b);
  return { bestMs: samples[0]!, medianMs: samples[Math.floor(samples.length / 2)]!, gcEvents };
}

export function row(label: string, value: string): void {
  process.stdout.write(`  ${label.padEnd(58)} ${value}\n`);
}

/** Best and median of `repeats` awaited runs after one warm-up. */
export async function timeAsync(
  body: () => Promise<unknown>,
  repeats: number,
): Promise<{ bestMs: number; medianMs: number }> {
  await body();
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const started = performance.now();
    await body();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { bestMs: samples[0]!, medianMs: samples[Math.floor(samples.length / 2)]! };
}
