import { latencySummary, type LatencySummary } from '../../../src-shared/metrics/latency-percentiles';

/**
 * Per-stage latency samples in milliseconds (preprocess, inference, gate + fusion, total), kept in
 * growable typed arrays so recording a frame allocates nothing; summarised with src-shared's
 * percentile definition.
 */
export const LATENCY_STAGES = ['preprocess', 'inference', 'gateFusion', 'total'] as const;
export type LatencyStage = (typeof LATENCY_STAGES)[number];
export type LatencyReport = Record<LatencyStage, LatencySummary | null>;

export class LatencyRecorder {
  private samples: Record<LatencyStage, Float64Array>;
  private count = 0;

  constructor(initialCapacity = 4096) {
    this.samples = Object.fromEntries(LATENCY_STAGES.map((s) => [s, new Float64Array(initialCapacity)])) as Record<
      LatencyStage,
      Float64Array
    >;
  }

  record(preprocessMs: number, inferenceMs: number, gateFusionMs: number, totalMs: number): void {
    if (this.count === this.samples.total.length) {
      for (const stage of LATENCY_STAGES) {
        const next = new Float64Array(this.count * 2);
        next.set(this.samples[stage]);
        this.samples[stage] = next;
      }
    }
    const i = this.count++;
    this.samples.preprocess[i] = Math.max(0, preprocessMs);
    this.samples.inference[i] = Math.max(0, inferenceMs);
    this.samples.gateFusion[i] = Math.max(0, gateFusionMs);
    this.samples.total[i] = Math.max(0, totalMs);
  }

  get sampleCount(): number {
    return this.count;
  }

  report(): LatencyReport {
    return Object.fromEntries(
      LATENCY_STAGES.map((s) => [s, latencySummary(this.samples[s], this.count)]),
    ) as LatencyReport;
  }
}
