import type { Distribution, PaperAnalyses } from './paper-analyses';

/**
 * The paper's analyses in words and tables, the one wording `knob analyze` prints and the desk's
 * Analyses tab shows: every figure with what it is and over which frames.
 */
export function analysisNumber(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(3);
}

const pct = (v: number) => `${(100 * v).toFixed(1)} %`;
const quartiles = (d: Distribution) =>
  `${analysisNumber(d.q25)} / ${analysisNumber(d.median)} / ${analysisNumber(d.q75)}`;

/** The summary, a sentence a figure group. */
export function analysisSummaryLines(a: PaperAnalyses): string[] {
  const n3 = analysisNumber;
  const lines = [
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

export interface AnalysisTable {
  columns: string[];
  rows: string[][];
}

/** T_eff and CSR by severity (Figure 3a-b); null when the trace has no severity column. */
export function severityTable(a: PaperAnalyses): AnalysisTable | null {
  if (a.bySeverity === null) return null;
  return {
    columns: ['severity', 'frames', 'T_eff q25 / median / q75', 'T_eff >= 1', 'CSR mean', 'CSR mean (disagree)'],
    rows: a.bySeverity.map((r) => [
      String(r.severity),
      String(r.teff.frames),
      quartiles(r.teff),
      pct(r.teffAtLeastOneShare),
      analysisNumber(r.csr.overall.mean),
      analysisNumber(r.csr.disagreement?.mean),
    ]),
  };
}

/** The frames with T_eff < 1 that the analyses list, with their reasons. */
export function exceptionTable(a: PaperAnalyses): AnalysisTable {
  return {
    columns: ['frame', 'T_eff', 'reason'],
    rows: a.teff.exceptions.map((e) => [String(e.frame), analysisNumber(e.teff), e.reason]),
  };
}
