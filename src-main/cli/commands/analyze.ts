import { stepsOfCall } from '../../core/calls/work-steps';
import {
  analysisNumber,
  analysisSummaryLines,
  exceptionTable,
  severityTable,
  type PaperAnalyses,
} from '../../../src-shared/analysis';
import { reliabilityPlotSvg } from '../../../src-shared/plots/reliability-plot';
import { checkOutputFolder, writeOutputFiles } from '../../core/files/output-files';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { describeSettings } from '../../core/report/provenance';
import { sectionReportFiles, type ReportSection } from '../../core/report/section-report';
import { GATE_OPTIONS, parseCommandArgs, positiveInteger, seedOption, settingsOverTrace } from '../cli-args';
import { UsageError } from '../usage-error';
import { printJson } from '../json-output';
import { commandCall } from '../command-call';
import { analyseTrace } from '../../core/use-cases/analyse-trace';

function analysisLines(a: PaperAnalyses, trace: string): string[] {
  return [
    `analyses of ${trace}: ${a.frames} frames (${a.labelledFrames} labelled) at ${describeSettings(a.settings)}`,
    ...analysisSummaryLines(a),
  ];
}

function reportSections(a: PaperAnalyses, lines: string[]): ReportSection[] {
  const sections: ReportSection[] = [{ heading: 'Summary', paragraphs: lines }];
  const bySeverity = severityTable(a);
  if (bySeverity !== null) sections.push({ heading: 'T_eff and CSR by severity', table: bySeverity });
  if (a.teff.exceptions.length > 0)
    sections.push({
      heading: 'Frames with T_eff < 1',
      paragraphs: [`The first ${a.teff.exceptions.length} of ${a.teff.exceptionCount}.`],
      table: exceptionTable(a),
    });
  for (const [name, subset] of [
    ['agree', a.agreement?.agree],
    ['disagree', a.agreement?.disagree],
  ] as const)
    if (subset)
      sections.push({
        heading: `Reliability where the branches ${name}`,
        figure: {
          name: `reliability-${name}`,
          caption: `${subset.reliability.identity}; ${subset.frames} frames, ECE ${analysisNumber(subset.ece)}.`,
          svg: reliabilityPlotSvg({
            identity: subset.reliability.identity,
            bins: subset.reliability.bins,
            smooth: null,
            histogram: null,
            width: 420,
            footnotes: [a.agreement!.identity],
          }),
        },
      });
  return sections;
}

/** knob analyze TRACE: the paper's analyses (T_eff, CSR, agreement, oracle advantage, polarisation). */
export async function analyzeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      permutations: { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob analyze takes one trace file');
  const permutations = positiveInteger(values.permutations, 'permutations', 999, 100_000);
  const seed = seedOption(values.seed);
  if (values.out !== undefined) await checkOutputFolder(values.out);
  const call = commandCall('analyze', values.json);
  let analyses: PaperAnalyses;
  try {
    const file = await readTraceFile(positionals[0]!, (read, size) => call.progress('reading the trace', read, size));
    const { gate: settings, calibrator } = await settingsOverTrace(values, file);
    call.progress('the analyses', 0, null);
    analyses = await analyseTrace({
      trace: file.trace,
      settings,
      calibrator,
      permutations,
      seed,
      signal: call.signal,
      onProgress: stepsOfCall(call).onProgress,
    });
  } finally {
    call.dispose();
  }
  const lines = analysisLines(analyses, positionals[0]!);
  const written =
    values.out === undefined
      ? []
      : await writeOutputFiles(
          values.out,
          sectionReportFiles(`Analyses of ${positionals[0]}`, reportSections(analyses, lines)),
        );
  if (values.json) printJson({ trace: positionals[0], ...analyses, files: written });
  else for (const line of [...lines, ...written.map((w) => `wrote ${w}`)]) process.stdout.write(`${line}\n`);
  return 0;
}
