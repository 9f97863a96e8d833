import type { Calibrator } from '../calibrators/output-calibrator';
import { KnobError } from '../errors';
import { clampGate } from '../fusion/convex-fusion';
import { argmaxRow, logSumExpRow, marginRow } from '../fusion/logits';
import { fusionDiagnosticsInto } from '../fusion/temperature';
import type { GateSettings } from '../gate/gate-settings';
import { expectedCalibrationError } from '../metrics/calibration-error';
import { gateConditionalCalibration, type GateConditionalResult } from '../metrics/gate-conditional';
import { binnedStatistics } from '../metrics/column-statistics';
import { ECE_15_IDENTITY } from '../metrics/headline-intervals';
import { EQUAL_WIDTH_15 } from '../metrics/metric-suite';
import { percentileOfSorted } from '../metrics/order-statistics';
import { rankOutcomes } from '../metrics/ranked-outcomes';
import { reliabilityDiagram, type ReliabilityDiagram } from '../metrics/reliability';
import { aurocOfTieBlocks } from '../metrics/selective';
import { replay } from '../trace/replay';
import type { Trace } from '../trace/trace';
import { spearmanRho } from './spearman';

/**
 * The paper's analyses (arXiv 2602.22702, E-1 and E-2) on any trace at any settings:
 * - T_eff and CSR per frame (fusion/temperature.ts) with their distributions by corruption severity
 *   and Spearman's rho between T_eff and severity (Figure 3a-b). T_eff >= 1 is a theorem only under
 *   conditions (ARCHITECTURE.md, "The gate"): every frame below 1 is counted and listed with the reason;
 * - the fused output's reliability and ECE where the branches' top-1 classes agree and where they
 *   disagree (Figure 3c);
 * - the oracle advantage (the dynamic branch gives the true class a higher probability than the
 *   static one: log p_dyn(y) > log p_static(y)) and the AUROC of u* and of g as scores for it
 *   (Figure 4's AUC_OA);
 * - the polarisation index E|g - 0.5| of the gate the fusion reads, clamp(g, 0, 1) (Figure 4);
 * - the gate-conditional calibration diagnostic (metrics/gate-conditional.ts).
 */
export interface Distribution {
  frames: number;
  min: number;
  q05: number;
  q25: number;
  median: number;
  q75: number;
  q95: number;
  max: number;
  /** Mean over the finite values (T_eff is +Infinity where the fused margin is 0). */
  finiteMean: number;
}

export interface CsrSummary {
  frames: number;
  mean: number;
  median: number;
  /** Share of the frames with CSR < 1 (the fusion shrank the confidence). */
  belowOneShare: number;
}

export interface SeverityRow {
  severity: number;
  teff: Distribution;
  teffAtLeastOneShare: number;
  csr: { overall: CsrSummary; disagreement: CsrSummary | null; agreement: CsrSummary | null };
}

export interface TeffException {
  frame: number;
  teff: number;
  /**
   * 'different-top-two': K >= 3, the branches rank different top-two classes and neither branch's
   * runner-ups are all equal, so the fused margin can exceed both (fusion/temperature.ts);
   * 'rounding': a condition of the theorem T_eff >= 1 holds, or the fused margin exceeds the branch
   * margins by no more than float64 rounding, so the frame is below 1 by rounding.
   */
  kind: TeffExceptionKind;
  reason: string;
}

export type TeffExceptionKind = 'different-top-two' | 'rounding';

export interface SubsetCalibration {
  frames: number;
  accuracy: number;
  ece: number;
  reliability: ReliabilityDiagram;
}

export interface PaperAnalyses {
  settings: GateSettings;
  frames: number;
  labelledFrames: number;
  teff: {
    distribution: Distribution;
    atLeastOneShare: number;
    exceptionCount: number;
    /** Every frame with T_eff < 1 counted by its reason's kind. */
    exceptionKinds: Record<TeffExceptionKind, number>;
    /** The first 100 frames with T_eff < 1, with the reason. */
    exceptions: TeffException[];
    /** Spearman's rho between T_eff and the frame's integer severity (null: no severity, or constant). */
    spearmanWithSeverity: number | null;
  };
  csr: { overall: CsrSummary; disagreement: CsrSummary | null; agreement: CsrSummary | null };
  /** Null when the trace has no severity column. */
  bySeverity: SeverityRow[] | null;
  /** The fused (calibrated, when a calibrator is given) output on labelled frames, by agreement of the branches. */
  agreement: { identity: string; agree: SubsetCalibration | null; disagree: SubsetCalibration | null } | null;
  oracleAdvantage: {
    identity: string;
    /** Labelled frames where the dynamic branch is better. */
    advantaged: number;
    frames: number;
    aurocUStar: number | null;
    aurocGate: number | null;
  } | null;
  polarisation: { identity: string; value: number };
  gateConditional: GateConditionalResult | null;
}

const EXCEPTIONS_LISTED = 100;

function distributionOf(values: Float64Array): Distribution {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  let finite = 0;
  for (const v of sorted)
    if (Number.isFinite(v)) {
      sum += v;
      finite++;
    }
  const q = (p: number) => (sorted.length === 0 ? Number.NaN : percentileOfSorted(sorted, p));
  return {
    frames: sorted.length,
    min: sorted[0] ?? Number.NaN,
    q05: q(0.05),
    q25: q(0.25),
    median: q(0.5),
    q75: q(0.75),
    q95: q(0.95),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    finiteMean: finite === 0 ? Number.NaN : sum / finite,
  };
}

function csrOf(csr: Float64Array, frames: number[]): CsrSummary | null {
  if (frames.length === 0) return null;
  const values = Float64Array.from(frames, (i) => csr[i]!);
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  let below = 0;
  for (const v of values) {
    sum += v;
    if (v < 1) below++;
  }
  return {
    frames: values.length,
    mean: sum / values.length,
    median: percentileOfSorted(sorted, 0.5),
    belowOneShare: below / values.length,
  };
}

/** The two highest classes of a row, highest first (lowest index on ties). */
function topTwo(z: ArrayLike<number>, offset: number, classCount: number): [number, number] {
  let first = 0;
  for (let k = 1; k < classCount; k++) if (z[offset + k]! > z[offset + first]!) first = k;
  let second = first === 0 ? 1 : 0;
  for (let k = 0; k < classCount; k++) if (k !== first && z[offset + k]! > z[offset + second]!) second = k;
  return [first, second];
}

/** Whether every logit of the row but its highest is equal (the runner-ups are flat). */
function runnerUpsAllEqual(z: ArrayLike<number>, offset: number, classCount: number, top: number): boolean {
  let runnerUp = NaN;
  for (let k = 0; k < classCount; k++) {
    if (k === top) continue;
    if (Number.isNaN(runnerUp)) runnerUp = z[offset + k]!;
    else if (z[offset + k] !== runnerUp) return false;
  }
  return true;
}

/** The largest |logit| of a frame in either branch: the scale of the fused margin's rounding error. */
function logitScale(trace: Trace, offset: number, classCount: number): number {
  let scale = 0;
  for (let k = 0; k < classCount; k++)
    scale = Math.max(scale, Math.abs(trace.zStatic[offset + k]!), Math.abs(trace.zDyn[offset + k]!));
  return scale;
}

/** How many units in the last place of the logits' scale the fused margin may exceed both branch margins by as rounding. */
const ROUNDING_ULPS = 16;

/**
 * Why a frame has T_eff < 1. The theorem T_eff >= 1 (fusion/temperature.ts) holds when K = 2, when
 * both branches rank the same two classes on top, or when either branch's runner-ups are all equal
 * (the fused margin against some class is then at most a convex combination of the branch margins);
 * a frame below 1 under any of these is rounding. So is one whose fused margin exceeds the larger
 * branch margin by no more than the rounding of float64 arithmetic on its logits (the margins can
 * be equal in exact arithmetic without any condition holding).
 */
function exceptionOf(trace: Trace, frame: number, teff: number): TeffException {
  const k = trace.classCount;
  const offset = frame * k;
  const [s1, s2] = topTwo(trace.zStatic, offset, k);
  const [d1, d2] = topTwo(trace.zDyn, offset, k);
  const names = trace.labelNames;
  const name = (c: number) => names[c] ?? `class ${c}`;
  const theorem =
    k < 3
      ? `K = ${k}`
      : new Set([s1, s2, d1, d2]).size <= 2
        ? 'both branches rank the same two classes on top'
        : runnerUpsAllEqual(trace.zStatic, offset, k, s1)
          ? "the static branch's runner-ups are all equal"
          : runnerUpsAllEqual(trace.zDyn, offset, k, d1)
            ? "the dynamic branch's runner-ups are all equal"
            : null;
  if (theorem !== null) return { frame, teff, kind: 'rounding', reason: `${theorem}: T_eff < 1 here is rounding` };
  const scale = logitScale(trace, offset, k);
  const branchMargin = Math.max(marginRow(trace.zStatic, offset, k), marginRow(trace.zDyn, offset, k));
  // T_eff = 0 (both branch margins 0, the fused one not) is never rounding
  const excess = teff > 0 ? branchMargin / teff - branchMargin : Infinity;
  if (excess <= ROUNDING_ULPS * Number.EPSILON * scale)
    return {
      frame,
      teff,
      kind: 'rounding',
      reason: `the fused margin exceeds both branch margins by ${excess.toExponential(1)}, within float64 rounding of logits up to ${scale.toPrecision(3)} in size: T_eff < 1 here is rounding`,
    };
  return {
    frame,
    teff,
    kind: 'different-top-two',
    reason: `K = ${k} >= 3 and the branches rank different top two (static: ${name(s1)} > ${name(s2)}; dynamic: ${name(d1)} > ${name(d2)}), so the fused margin can exceed both`,
  };
}

/** The steps paperAnalyses reports with labelled frames (one fewer without: no permutation test). */
export const ANALYSIS_STEPS = 5;

export function paperAnalyses(
  trace: Trace,
  settings: GateSettings,
  options: {
    calibrator?: Calibrator | null;
    permutations?: number;
    seed?: number;
    /** Before each of the ANALYSIS_STEPS steps: its name and the steps done (the work bar's). */
    onStep?: (stage: string, done: number, total: number) => void;
  } = {},
): PaperAnalyses {
  const n = trace.frameCount;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'the trace has no frames to analyse');
  const k = trace.classCount;
  // the permutation test runs on labelled frames only: without them there is a step fewer
  let hasLabels = false;
  if (trace.labels !== null)
    for (let i = 0; i < n && !hasLabels; i++) hasLabels = trace.labels[i]! >= 0 && trace.labels[i]! < k;
  const steps = hasLabels ? ANALYSIS_STEPS : ANALYSIS_STEPS - 1;
  let done = 0;
  const step = (stage: string) => options.onStep?.(stage, done++, steps);
  step(`replaying ${n} frames`);
  const output = replay(trace, settings, { calibrator: options.calibrator ?? null });
  step('T_eff and CSR of every frame');
  const teff = new Float64Array(n);
  const csr = new Float64Array(n);
  fusionDiagnosticsInto(trace.zStatic, trace.zDyn, output.g, k, 0, n, teff, csr, new Float64Array(k));
  const agrees = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    agrees[i] = argmaxRow(trace.zStatic, i * k, k) === argmaxRow(trace.zDyn, i * k, k) ? 1 : 0;
  const all = Array.from({ length: n }, (_, i) => i);
  const agreeing = all.filter((i) => agrees[i] === 1);
  const disagreeing = all.filter((i) => agrees[i] === 0);

  // T_eff below 1, with the reason
  let exceptionCount = 0;
  const exceptionKinds: Record<TeffExceptionKind, number> = { 'different-top-two': 0, rounding: 0 };
  const exceptions: TeffException[] = [];
  for (let i = 0; i < n; i++)
    if (teff[i]! < 1) {
      const exception = exceptionOf(trace, i, teff[i]!);
      exceptionCount++;
      exceptionKinds[exception.kind]++;
      if (exceptions.length < EXCEPTIONS_LISTED) exceptions.push(exception);
    }

  // by severity
  step('T_eff and CSR by severity');
  const severityColumn = trace.metadata.severity;
  const severity = severityColumn?.kind === 'number' ? severityColumn.values : null;
  let bySeverity: SeverityRow[] | null = null;
  let spearmanWithSeverity: number | null = null;
  if (severity !== null) {
    // frames without a finite severity (a trace written by other tools) are left out of both
    const rated = all.filter((i) => Number.isFinite(severity[i]!));
    const levels = [...new Set(rated.map((i) => Math.round(severity[i]!)))].sort((a, b) => a - b);
    bySeverity = levels.map((level) => {
      const frames = rated.filter((i) => Math.round(severity[i]!) === level);
      const values = Float64Array.from(frames, (i) => teff[i]!);
      return {
        severity: level,
        teff: distributionOf(values),
        teffAtLeastOneShare: values.filter((v) => v >= 1).length / values.length,
        csr: {
          overall: csrOf(csr, frames)!,
          disagreement: csrOf(
            csr,
            frames.filter((i) => agrees[i] === 0),
          ),
          agreement: csrOf(
            csr,
            frames.filter((i) => agrees[i] === 1),
          ),
        },
      };
    });
    spearmanWithSeverity = spearmanRho(
      Float64Array.from(rated, (i) => Math.round(severity[i]!)),
      Float64Array.from(rated, (i) => teff[i]!),
    );
  }

  // labelled frames: agreement subsets, oracle advantage, gate-conditional
  step('agreement and the oracle advantage');
  const labels = trace.labels;
  const labelled = labels === null ? [] : all.filter((i) => labels[i]! >= 0 && labels[i]! < k);
  const correct = Uint8Array.from(labelled, (i) => (output.top1[i] === labels![i] ? 1 : 0));
  const subset = (frames: number[]): SubsetCalibration | null => {
    if (frames.length === 0) return null;
    const confidence = Float64Array.from(frames, (i) => output.confidence[i]!);
    const right = Uint8Array.from(frames, (i) => (output.top1[i] === labels![i] ? 1 : 0));
    return {
      frames: frames.length,
      accuracy: right.reduce((s, v) => s + v, 0) / right.length,
      ece: expectedCalibrationError(binnedStatistics(confidence, right, EQUAL_WIDTH_15)),
      reliability: reliabilityDiagram(confidence, right, EQUAL_WIDTH_15),
    };
  };
  const gate = Float64Array.from(output.g.subarray(0, n), clampGate);
  let oracleAdvantage: PaperAnalyses['oracleAdvantage'] = null;
  let agreement: PaperAnalyses['agreement'] = null;
  let gateConditional: GateConditionalResult | null = null;
  if (labelled.length > 0) {
    agreement = {
      identity: `${ECE_15_IDENTITY} of the output; branches agree when their top-1 classes are equal`,
      agree: subset(labelled.filter((i) => agrees[i] === 1)),
      disagree: subset(labelled.filter((i) => agrees[i] === 0)),
    };
    const advantaged = Uint8Array.from(labelled, (i) => {
      const y = labels![i]!;
      // log p(y) = z_y - logsumexp(z), per branch
      const staticLogP = trace.zStatic[i * k + y]! - logSumExpRow(trace.zStatic, i * k, k);
      const dynLogP = trace.zDyn[i * k + y]! - logSumExpRow(trace.zDyn, i * k, k);
      return dynLogP > staticLogP ? 1 : 0;
    });
    const aurocOf = (score: Float64Array) => {
      const ranked = rankOutcomes(score, advantaged);
      return aurocOfTieBlocks(ranked.positives, ranked.negatives, ranked.blockCount)?.value ?? null;
    };
    oracleAdvantage = {
      identity:
        'AUROC(score for the oracle advantage 1[log p_dyn(y) > log p_static(y)], Mann-Whitney, ties 1/2), labelled frames',
      advantaged: advantaged.reduce((s, v) => s + v, 0),
      frames: labelled.length,
      aurocUStar: aurocOf(Float64Array.from(labelled, (i) => Math.min(1, Math.max(0, trace.uRef[i]!)))),
      aurocGate: aurocOf(Float64Array.from(labelled, (i) => gate[i]!)),
    };
    step(`the gate-conditional calibration test (${options.permutations ?? 999} permutations)`);
    gateConditional = gateConditionalCalibration(
      Float64Array.from(labelled, (i) => output.confidence[i]!),
      correct,
      Float64Array.from(labelled, (i) => gate[i]!),
      { permutations: options.permutations ?? 999, seed: options.seed ?? 0 },
    );
  }
  let polarisation = 0;
  for (let i = 0; i < n; i++) polarisation += Math.abs(gate[i]! - 0.5);

  const teffAtLeastOne = n - exceptionCount;
  return {
    settings,
    frames: n,
    labelledFrames: labelled.length,
    teff: {
      distribution: distributionOf(teff),
      atLeastOneShare: teffAtLeastOne / n,
      exceptionCount,
      exceptionKinds,
      exceptions,
      spearmanWithSeverity,
    },
    csr: { overall: csrOf(csr, all)!, disagreement: csrOf(csr, disagreeing), agreement: csrOf(csr, agreeing) },
    bySeverity,
    agreement,
    oracleAdvantage,
    polarisation: { identity: 'polarisation Π = mean over frames of |clamp(g, 0, 1) - 0.5|', value: polarisation / n },
    gateConditional,
  };
}
