import { CORRUPTION_NAMES, SEVERITIES, type CorruptionName } from '../../../src-shared/corruptions';
import { KnobError } from '../../../src-shared/errors';
import { GATE_VARIANT_LABELS, GATE_VARIANTS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { topLabelBinnedMetrics } from '../../../src-shared/metrics/binned-metrics';
import { EQUAL_MASS_15, EQUAL_WIDTH_15 } from '../../../src-shared/metrics/metric-suite';
import { accuracy, negativeLogLikelihood } from '../../../src-shared/metrics/proper-scores';
import { topLabelScores } from '../../../src-shared/metrics/scores';
import { replay } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames, scoresOfFrames } from '../../../src-shared/trace/trace-scores';
import type { InferenceClient } from '../inference/inference-client';
import { openSource } from '../sources/open-source';
import { runOffline } from './offline-run';

/**
 * The comparison of the paper's Table 2 on Fashion-MNIST-C, in reset mode: the model runs once per
 * corruption x severity (the first `imagesPerCondition` test images, seeded corruptions), then each
 * method is a pure function of those traces: Static (z_static), Dynamic (z_dyn), and the three gate
 * variants fused at the given settings in reset mode. Figures are means over the conditions of the
 * per-condition values. Latency per frame = the model's inference per frame (batched, as measured
 * in this run) + the method's gate + fusion time per frame (none for Static and Dynamic).
 */
export const TABLE_METRIC_IDENTITIES = {
  ece: 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)',
  debiasedEce: 'debiased L2-CE (Kumar et al. 2019, top-label, 15 equal-mass bins)',
  nll: 'NLL (natural log, from logits)',
};

export interface TableRow {
  method: string;
  accuracy: number;
  error: number;
  debiasedEce: number;
  ece: number;
  nll: number;
  latencyMsPerFrame: number;
}

export interface ResetTable {
  settings: GateSettings;
  conditions: number;
  imagesPerCondition: number;
  corruptions: readonly string[];
  identities: typeof TABLE_METRIC_IDENTITIES;
  rows: TableRow[];
}

interface Figures {
  accuracy: number;
  debiasedEce: number;
  ece: number;
  nll: number;
}

function figures(trace: Trace, logits: Float32Array | Float64Array): Figures {
  const scores = scoresOfFrames(trace, logits, labelledFrames(trace));
  const top = topLabelScores(scores);
  const find = (values: ReturnType<typeof topLabelBinnedMetrics>, name: string) =>
    values.find((m) => m.name === name)!.value;
  return {
    accuracy: accuracy(top).value,
    ece: find(topLabelBinnedMetrics(top, EQUAL_WIDTH_15), 'ECE'),
    debiasedEce: find(topLabelBinnedMetrics(top, EQUAL_MASS_15), 'debiased L2-CE'),
    nll: negativeLogLikelihood(scores).value,
  };
}

export interface ResetTableOptions {
  client: InferenceClient;
  settings: GateSettings;
  imagesPerCondition: number;
  corruptions?: readonly CorruptionName[];
  batchSize?: number;
  seed?: number;
  onProgress?: (done: number, total: number, label: string) => void;
}

export async function resetModeTable(options: ResetTableOptions): Promise<ResetTable> {
  const settings = { ...options.settings, mode: 'reset' as const };
  const corruptions = options.corruptions ?? CORRUPTION_NAMES;
  const model = options.client.description;
  const source = await openSource({ kind: 'embedded' }, { target: model.input, labelNames: model.labelNames });
  const methods = ['Static', 'Dynamic', ...GATE_VARIANTS.map((v) => GATE_VARIANT_LABELS[v])];
  const sums = methods.map(() => ({ accuracy: 0, debiasedEce: 0, ece: 0, nll: 0, gateMs: 0 }));
  let inferenceMs = 0;
  let frames = 0;
  let conditions = 0;
  const total = corruptions.length * SEVERITIES.length;
  for (const corruption of corruptions) {
    for (const severity of SEVERITIES) {
      options.onProgress?.(conditions, total, `${corruption} ${severity}`);
      const run = await runOffline({
        client: options.client,
        source,
        schedule: { kind: 'constant', corruption, severity },
        streamSeed: options.seed ?? 0,
        settings,
        batchSize: options.batchSize ?? 250,
        maxFrames: options.imagesPerCondition,
      });
      if (run.error !== null)
        throw new KnobError(run.error.code, `${corruption} severity ${severity}: ${run.error.message}`);
      inferenceMs += (run.latencyPerFrame.inference?.meanMs ?? 0) * run.framesProcessed;
      frames += run.framesProcessed;
      const perMethod: Array<{ figures: Figures; gateMs: number }> = [
        { figures: figures(run.trace, run.trace.zStatic), gateMs: 0 },
        { figures: figures(run.trace, run.trace.zDyn), gateMs: 0 },
        ...GATE_VARIANTS.map((variant) => {
          const started = performance.now();
          const output = replay(run.trace, { ...settings, variant }, { keepFusedLogits: true });
          const gateMs = performance.now() - started;
          return { figures: figures(run.trace, output.fusedLogits!), gateMs };
        }),
      ];
      perMethod.forEach((m, i) => {
        sums[i].accuracy += m.figures.accuracy;
        sums[i].debiasedEce += m.figures.debiasedEce;
        sums[i].ece += m.figures.ece;
        sums[i].nll += m.figures.nll;
        sums[i].gateMs += m.gateMs;
      });
      conditions++;
    }
  }
  options.onProgress?.(total, total, 'done');
  const inferencePerFrame = inferenceMs / frames;
  return {
    settings,
    conditions,
    imagesPerCondition: options.imagesPerCondition,
    corruptions,
    identities: TABLE_METRIC_IDENTITIES,
    rows: methods.map((method, i) => ({
      method,
      accuracy: sums[i].accuracy / conditions,
      error: 1 - sums[i].accuracy / conditions,
      debiasedEce: sums[i].debiasedEce / conditions,
      ece: sums[i].ece / conditions,
      nll: sums[i].nll / conditions,
      latencyMsPerFrame: inferencePerFrame + sums[i].gateMs / frames,
    })),
  };
}

export function resetTableMarkdown(table: ResetTable): string {
  const s = table.settings;
  const lines = [
    `Fashion-MNIST-C, reset mode (tau ${s.tauSeconds} s, g0 ${s.g0}; zeta ${s.zeta}, wn ${s.wnRadPerSec} rad/s, ${s.discretization}); mean over ${table.conditions} corruption x severity conditions, ${table.imagesPerCondition} test images each.`,
    '',
    '| method | accuracy | error | debiased ECE | ECE | NLL | latency / frame |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...table.rows.map(
      (r) =>
        `| ${r.method} | ${(r.accuracy * 100).toFixed(2)} % | ${(r.error * 100).toFixed(2)} % | ${r.debiasedEce.toFixed(4)} | ${r.ece.toFixed(4)} | ${r.nll.toFixed(4)} | ${(r.latencyMsPerFrame * 1000).toFixed(2)} µs |`,
    ),
    '',
    `debiased ECE: ${table.identities.debiasedEce}; ECE: ${table.identities.ece}; NLL: ${table.identities.nll}.`,
    "Latency: batched inference per frame in this run plus the method's gate + fusion per frame.",
  ];
  return `${lines.join('\n')}\n`;
}
