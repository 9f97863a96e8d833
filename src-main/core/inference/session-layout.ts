import { availableParallelism } from 'node:os';

/**
 * How the inference process lays sessions over the cores on the CPU provider: `sessions` sessions
 * (one worker thread each) run different batches at once, each with `threadsPerSession` intra-op
 * threads. Two batches at a time keep both halves of the machine busy while the engine keeps four
 * batches in flight; other providers get one session. Rationale: inference-process.ts.
 */
export interface SessionLayout {
  sessions: number;
  threadsPerSession: number;
}

export function cpuSessionLayout(cores: number = availableParallelism()): SessionLayout {
  const sessions = Math.max(1, Math.min(2, cores));
  return { sessions, threadsPerSession: Math.max(1, Math.floor(cores / sessions)) };
}
