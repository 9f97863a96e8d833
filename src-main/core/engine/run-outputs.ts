import { GATE_VARIANT_LABELS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { metricSuite, PRESET_NAMES, presetMetrics } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { reliabilityDiagram, type ReliabilityDiagram } from '../../../src-shared/metrics/reliability';
import { topLabelScores, type ClassScores, type TopLabelScores } from '../../../src-shared/metrics/scores';
import { EQUAL_WIDTH_15 } from '../../../src-shared/metrics/metric-suite';
import { replay, type ReplayOutput } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames, scoresOfFrames } from '../../../src-shared/trace/trace-scores';
import { htmlReport } from '../report/html-report';
import { writeOutputFiles, type OutputFile } from '../files/output-files';
import { encodeTraceFile } from '../recording/trace-arrow';

/**
 * What `knob run` and `knob replay` leave in their output folder, from (trace, settings) alone:
 * trace.arrow (the trace with the run's outputs), metrics.json (every metric of the fused output,
 * and of each branch for reference, with identities) and report.html.
 */
export interface RunAnalysis {
  output: ReplayOutput;
  labelledFrameCount: number;
  metrics: { fused: MetricValue[]; static: MetricValue[]; dynamic: MetricValue[] };
  reliability: ReliabilityDiagram | null;
}

export function analyseRun(trace: Trace, settings: GateSettings): RunAnalysis {
  const output = replay(trace, settings, { keepFusedLogits: true });
  const frames = labelledFrames(trace);
  if (frames.length === 0)
    return { output, labelledFrameCount: 0, metrics: { fused: [], static: [], dynamic: [] }, reliability: null };
  const all = (scores: ClassScores, top: TopLabelScores = topLabelScores(scores)): MetricValue[] => [
    ...metricSuite(scores),
    ...PRESET_NAMES.flatMap((preset) => presetMetrics(preset, scores, top)),
  ];
  const fusedScores = scoresOfFrames(trace, output.fusedLogits!, frames);
  const fusedTop = topLabelScores(fusedScores);
  return {
    output,
    labelledFrameCount: frames.length,
    metrics: {
      fused: all(fusedScores, fusedTop),
      static: all(scoresOfFrames(trace, trace.zStatic, frames)),
      dynamic: all(scoresOfFrames(trace, trace.zDyn, frames)),
    },
    reliability: reliabilityDiagram(fusedTop.confidence, fusedTop.correct, EQUAL_WIDTH_15),
  };
}

export interface RunOutputFiles {
  trace: string;
  metrics: string;
  report: string;
}

/** Why a run's outputs cover fewer frames than the source has (a failure or a cancel part-way). */
export interface PartialRun {
  reason: string;
  framesProcessed: number;
  framesExpected: number | null;
}

/**
 * The outputs of a run, as files to write in one group: trace.arrow (the trace with the run's
 * outputs), metrics.json (every metric of the fused output and of each branch, with identities)
 * and report.html. A partial run says so in both metrics.json (`partial`) and the report (a banner).
 */
export function runOutputFiles(
  trace: Trace,
  settings: GateSettings,
  analysis: RunAnalysis,
  context: Record<string, unknown>,
  partial: PartialRun | null = null,
): OutputFile[] {
  const output = { ...analysis.output, fusedLogits: null };
  const severity = trace.metadata.severity;
  const metricsJson = {
    settings,
    frameCount: trace.frameCount,
    labelledFrameCount: analysis.labelledFrameCount,
    clampedInputs: analysis.output.clampedInputs,
    partial,
    context,
    metrics: analysis.metrics,
  };
  const html = htmlReport({
    title: `Knob run: ${GATE_VARIANT_LABELS[settings.variant]}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s`,
    subtitle: `${settings.mode} mode, ${settings.discretization}${settings.mode === 'reset' ? `, tau ${settings.tauSeconds} s, g0 ${settings.g0}` : ''}; ${trace.frameCount} frames, ${analysis.labelledFrameCount} labelled`,
    partial:
      partial === null
        ? null
        : `Partial run: ${partial.framesProcessed}${partial.framesExpected === null ? '' : ` of ${partial.framesExpected}`} frames, stopped by: ${partial.reason}`,
    timestampsSeconds: trace.timestampsSeconds,
    g: analysis.output.g,
    uRef: trace.uRef,
    severity: severity?.kind === 'number' ? severity.values : null,
    reliability: analysis.reliability,
    metrics: analysis.metrics.fused,
    facts: Object.entries(context).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  });
  return [
    { name: 'trace.arrow', data: encodeTraceFile(trace, { settings, output }, context) },
    {
      name: 'metrics.json',
      data: `${JSON.stringify(metricsJson, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 1)}\n`,
    },
    { name: 'report.html', data: html },
  ];
}

/** Writes a run's outputs into `outDir`, all or nothing. */
export async function writeRunOutputs(
  outDir: string,
  trace: Trace,
  settings: GateSettings,
  analysis: RunAnalysis,
  context: Record<string, unknown>,
  partial: PartialRun | null = null,
): Promise<RunOutputFiles> {
  const [tracePath, metrics, report] = await writeOutputFiles(
    outDir,
    runOutputFiles(trace, settings, analysis, context, partial),
  );
  return { trace: tracePath, metrics, report };
}
