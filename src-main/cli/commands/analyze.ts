import { paperAnalyses, type Distribution, type PaperAnalyses } from '../../../src-shared/analysis';
import { checkCalibratorFor, compileCalibrator } from '../../../src-shared/calibrators';
import { reliabilityPlotSvg } from '../../../src-shared/plots/reliability-plot';
import { checkOutputFolder, writeOutputFiles } from '../../core/files/output-files';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { describeSettings } from '../../core/report/provenance';
import { sectionReportFiles, type ReportSection } from '../../core/report/section-report';
import {
  GATE_OPTIONS,
  parseCommandArgs,
  positiveInteger,
  seedOption,
  settingsOverTrace,
  UsageError,
} from '../cli-args';
import { printJson } from '../json-output';

const n3 = (v: number | null | undefined) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(3);
const pct = (v: number) => `${(100 * v).toFixed(1)} %`;
const quartiles = (d: Distribution) => `${n3(d.q25)} / ${n3(d.median)} / ${n3(d.q75)}`;

function analysisLines(a: PaperAnalyses, trace: string): string[] {
  const lines = [
    `analyses of ${trace}: ${a.frames} frames (${a.labelledFrames} labelled) at ${describeSettings(a.settings)}`,
    `T_eff >= 1 on ${pct(a.teff.atLeastOneShare)} of frames; ${a.teff.exceptionCount} below 1 (${a.teff.exceptionKinds['different-top-two']} where K >= 3 and the branches rank different top two, ${a.teff.exceptionKinds.rounding} by rounding)`,
    `T_eff quartiles ${quartiles(a.teff.distribution)}; Spearman's rho with severity: ${a.teff.spearmanWithSeverity === null ? 'none (no severity column, or constant)' : n3(a.teff.spearmanWithSeverity)}`,
    `CSR mean: all ${n3(a.csr.overall.mean)}, branches agree ${n3(a.csr.agreement?.mean)}, disagree ${n3(a.csr.disagreement?.mean)} (${a.csr.disagreement?.frames ?? 0} frames, ${pct(a.csr.disagreement?.belowOneShare ?? 0)} below 1)`,
    `${a.polarisation.identity}: ${n3(a.polarisation.value)}`,
  ];
  if (a.agreement !== null)
    lines.push(
      `ECE where the branches agree: ${n3(a.agreement.agree?.ece)} (${a.agreement.agree?.frames ?? 0} frames); disagree: ${n3(a.agreement.disagree?.ece)} (${a.agreement.disagree?.frames ?? 0} frames)`,
    );
  if (a.oracleAdvantage !== null)
    lines.push(
      `oracle advantage on ${a.oracleAdvantage.advantaged} of ${a.oracleAdvantage.frames} labelled frames; AUROC of u* ${n3(a.oracleAdvantage.aurocUStar)}, of g ${n3(a.oracleAdvantage.aurocGate)}`,
    );
  if (a.gateConditional !== null)
    lines.push(
      `gate-conditional calibration: statistic ${n3(a.gateConditional.statistic)}, permutation p ${n3(a.gateConditional.pValue)} (${a.gateConditional.permutations} permutations), effect size ${n3(a.gateConditional.effectSize)}; ${a.gateConditional.identity}`,
    );
  return lines;
}

function reportSections(a: PaperAnalyses, lines: string[]): ReportSection[] {
  const sections: ReportSection[] = [{ heading: 'Summary', paragraphs: lines }];
  if (a.bySeverity !== null)
    sections.push({
      heading: 'T_eff and CSR by severity',
      table: {
        columns: ['severity', 'frames', 'T_eff q25 / median / q75', 'T_eff >= 1', 'CSR mean', 'CSR mean (disagree)'],
        rows: a.bySeverity.map((r) => [
          String(r.severity),
          String(r.teff.frames),
          quartiles(r.teff),
          pct(r.teffAtLeastOneShare),
          n3(r.csr.overall.mean),
          n3(r.csr.disagreement?.mean),
        ]),
      },
    });
  if (a.teff.exceptions.length > 0)
    sections.push({
      heading: 'Frames with T_eff < 1',
      paragraphs: [`The first ${a.teff.exceptions.length} of ${a.teff.exceptionCount}.`],
      table: {
        columns: ['frame', 'T_eff', 'reason'],
        rows: a.teff.exceptions.map((e) => [String(e.frame), n3(e.teff), e.reason]),
      },
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
          caption: `${subset.reliability.identity}; ${subset.frames} frames, ECE ${n3(subset.ece)}.`,
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
  if (values.out !== undefined) await checkOutputFolder(values.out);
  const file = await readTraceFile(positionals[0]!);
  const { gate: settings, calibrator } = await settingsOverTrace(values, file);
  if (calibrator !== null) checkCalibratorFor(calibrator, file.trace.classCount);
  const analyses = paperAnalyses(file.trace, settings, {
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
    permutations: positiveInteger(values.permutations, 'permutations', 999, 100_000),
    seed: seedOption(values.seed),
  });
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
