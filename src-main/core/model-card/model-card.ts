import { sha256Hex } from '../files/sha256';
import { basename } from 'node:path';
import {
  BLUR_CORRUPTIONS,
  CORRUPTION_NAMES,
  CORRUPTION_TABLE,
  NOISE_CORRUPTIONS,
  corruptBatch,
  imageFromBytes,
  imageToBytes,
  type CorruptionName,
} from '../../../src-shared/corruptions';
import { frameSeed } from '../../../src-shared/corruptions/schedule';
import { fuseRowInto } from '../../../src-shared/fusion/convex-fusion';
import { argmaxRow, logSumExpRow } from '../../../src-shared/fusion/logits';
import { topLabelBinnedMetrics } from '../../../src-shared/metrics/binned-metrics';
import { EQUAL_WIDTH_15 } from '../../../src-shared/metrics/metric-suite';
import { accuracy, negativeLogLikelihood } from '../../../src-shared/metrics/proper-scores';
import { scoresFromLogits, topLabelScores } from '../../../src-shared/metrics/scores';
import { auroc } from '../../../src-shared/metrics/selective';
import { resample } from '../../../src-shared/metrics/bootstrap';
import {
  headlineStatistics,
  meanStatistic,
  meanValuesOverGroups,
  stratifiedFigure,
  type HeadlineStatistic,
  type StratifiedFigure,
  type Stratum,
} from '../../../src-shared/metrics/headline-intervals';
import { pairedDifferencesOverGroups, type Verdict } from '../../../src-shared/metrics/paired-differences';
import { methodWithNote } from '../../../src-shared/metrics/metric-format';
import { readIdxFile } from '../datasets/idx-file';
import { readUserFile } from '../files/user-files';
import { ModelOptionsSchema } from '../../../src-shared/api/model-options';
import { loadModel, type LoadedModel } from '../inference/loaded-model';
import { readOnnxMetadata } from '../inference/onnx-metadata';

/**
 * The model card's numbers, computed (never typed): for the clean test set and every grayscale
 * corruption x severity, accuracy, NLL and ECE of the static branch, the dynamic branch and the
 * fused output with g = u* (Knob-IA, reset-free), mean u*, branch disagreement; and u* read as a
 * score for oracle advantage (the dynamic branch's loss lower than the static one's).
 */
export const CARD_SEED = 20261130;
const NOISE_AND_BLUR: CorruptionName[] = [...NOISE_CORRUPTIONS, ...BLUR_CORRUPTIONS];

export interface BranchFigures {
  accuracy: number;
  nll: number;
  ece: number;
}

export interface ConditionRow {
  corruption: string;
  severity: number;
  heldOut: boolean;
  images: number;
  correctFused: number;
  static: BranchFigures;
  dynamic: BranchFigures;
  fused: BranchFigures;
  meanU: number;
  disagreement: number;
}

export interface ModelCard {
  model: { file: string; sha256: string; bytes: number; opset: number | null; training: unknown };
  evaluation: {
    testImages: number;
    imagesPerCorruptedCondition: number;
    corruptionSeed: number;
    ece: string;
    nll: string;
  };
  conditions: ConditionRow[];
  summary: {
    cleanAccuracyFused: number;
    meanOverCorruptions: { static: BranchFigures; dynamic: BranchFigures; fused: BranchFigures };
    uDropCleanToSeverity5: Record<string, number>;
    uAurocOracleAdvantage: { overall: number | null; disagreement: number | null; heldOut: number | null };
  };
  /**
   * Each claim with its 95 % interval: met when the interval lies wholly on the claimed side, not
   * met when wholly on the other, and "inside the noise" (no claim) when it straddles the threshold.
   */
  targets: Array<{ target: string; status: ClaimStatus; detail: string }>;
}

export type ClaimStatus = 'met' | 'not met' | 'inside the noise';

interface Evaluated {
  row: ConditionRow;
  u: Float32Array;
  dynamicBetter: Uint8Array;
  disagree: Uint8Array;
  /** Resample statistics of each output, for the claims' intervals. */
  statistics: Record<'static' | 'dynamic' | 'fused', HeadlineStatistic[]>;
}

function figures(
  logits: Float32Array | Float64Array,
  labels: Int32Array,
  k: number,
): { figures: BranchFigures; statistics: HeadlineStatistic[] } {
  const scores = scoresFromLogits(logits, k, labels);
  const top = topLabelScores(scores);
  return {
    figures: {
      accuracy: accuracy(top).value,
      nll: negativeLogLikelihood(scores).value,
      ece: topLabelBinnedMetrics(top, EQUAL_WIDTH_15).find((m) => m.name === 'ECE')!.value,
    },
    statistics: headlineStatistics(scores, top),
  };
}

async function evaluate(
  model: LoadedModel,
  images: Uint8Array,
  labels: Int32Array,
  corruption: string,
  severity: number,
  heldOut: boolean,
): Promise<Evaluated> {
  const n = labels.length;
  const k = model.description.classCount;
  const zStatic = new Float32Array(n * k);
  const zDyn = new Float32Array(n * k);
  const u = new Float32Array(n);
  const batch = 1000;
  for (let from = 0; from < n; from += batch) {
    const count = Math.min(batch, n - from);
    const pixels = model.description.input.width * model.description.input.height;
    const out = await model.run(images.subarray(from * pixels, (from + count) * pixels), count, from);
    zStatic.set(out.zStatic, from * k);
    zDyn.set(out.zDyn, from * k);
    u.set(out.uRef, from);
  }
  const fused = new Float64Array(n * k);
  const dynamicBetter = new Uint8Array(n);
  const disagree = new Uint8Array(n);
  let uSum = 0;
  let disagreements = 0;
  for (let i = 0; i < n; i++) {
    fuseRowInto(zStatic, zDyn, i * k, k, u[i], fused, i * k);
    const lossStatic = logSumExpRow(zStatic, i * k, k) - zStatic[i * k + labels[i]];
    const lossDyn = logSumExpRow(zDyn, i * k, k) - zDyn[i * k + labels[i]];
    dynamicBetter[i] = lossDyn < lossStatic ? 1 : 0;
    disagree[i] = argmaxRow(zStatic, i * k, k) !== argmaxRow(zDyn, i * k, k) ? 1 : 0;
    disagreements += disagree[i];
    uSum += u[i];
  }
  const ofFused = figures(fused, labels, k);
  const ofStatic = figures(zStatic, labels, k);
  const ofDynamic = figures(zDyn, labels, k);
  return {
    row: {
      corruption,
      severity,
      heldOut,
      images: n,
      correctFused: Math.round(ofFused.figures.accuracy * n),
      static: ofStatic.figures,
      dynamic: ofDynamic.figures,
      fused: ofFused.figures,
      meanU: uSum / n,
      disagreement: disagreements / n,
    },
    u,
    dynamicBetter,
    disagree,
    statistics: { static: ofStatic.statistics, dynamic: ofDynamic.statistics, fused: ofFused.statistics },
  };
}

/** u* read as a score for oracle advantage, pooled over the selected samples, as a resample statistic. */
function uAurocStatistic(
  parts: Evaluated[],
  select: (part: Evaluated, i: number) => boolean,
): { statistic: HeadlineStatistic; sampleCount: number } {
  const u: number[] = [];
  const better: number[] = [];
  for (const part of parts) {
    for (let i = 0; i < part.u.length; i++) {
      if (!select(part, i)) continue;
      u.push(part.u[i]);
      better.push(part.dynamicBetter[i]);
    }
  }
  const confidence = Float64Array.from(u);
  const correct = Uint8Array.from(better);
  const predicted = new Int32Array(u.length);
  const evaluate = (indices: Uint32Array | null): number => {
    const result =
      indices === null
        ? auroc({ confidence, predicted, correct })
        : auroc({ confidence: resample(confidence, indices), predicted, correct: resample(correct, indices) });
    return result === null ? Number.NaN : result.value;
  };
  return {
    statistic: { name: 'AUROC', identity: 'AUROC(u*, oracle advantage)', lowerIsBetter: false, evaluate },
    sampleCount: u.length,
  };
}

function uAuroc(parts: Evaluated[], select: (part: Evaluated, i: number) => boolean): number | null {
  const { statistic, sampleCount } = uAurocStatistic(parts, select);
  const value = sampleCount > 0 ? statistic.evaluate(null) : Number.NaN;
  return Number.isFinite(value) ? value : null;
}

/**
 * A branch's figures averaged over conditions: the means the claims' paired intervals are built
 * around (meanValuesOverGroups), so a claim shows the very numbers it compares.
 */
function meanOver(parts: Evaluated[], branch: 'static' | 'dynamic' | 'fused'): BranchFigures {
  const statistics = parts.map((p) => p.statistics[branch]);
  const means = meanValuesOverGroups(statistics);
  const of = (name: string) => means[statistics[0]!.findIndex((s) => s.name === name)]!;
  return { accuracy: of('accuracy'), nll: of('NLL'), ece: of('ECE') };
}

export interface ModelCardOptions {
  modelPath: string;
  imagesPath: string;
  labelsPath: string;
  imagesPerCondition: number;
  /** Only these conditions (for checks); default all. */
  only?: Array<{ corruption: string; severity: number }>;
  onProgress?: (message: string) => void;
}

export async function generateModelCard(options: ModelCardOptions): Promise<ModelCard> {
  const model = await loadModel(
    ModelOptionsSchema.parse({ path: options.modelPath, contract: 'knob-native', executionProviders: ['cpu'] }),
  );
  try {
    const bytes = await readUserFile(options.modelPath, 'model');
    const imagesIdx = await readIdxFile(options.imagesPath);
    const labelsIdx = await readIdxFile(options.labelsPath);
    const [count, height, width] = imagesIdx.dimensions;
    const labels = Int32Array.from(labelsIdx.data);
    const metadata = readOnnxMetadata(bytes, options.modelPath);
    const training = JSON.parse(metadata.properties['knob.training'] ?? '{}') as { held_out_corruptions?: string[] };
    const heldOut = new Set(training.held_out_corruptions ?? []);
    const wanted = (corruption: string, severity: number) =>
      !options.only || options.only.some((o) => o.corruption === corruption && o.severity === severity);
    const parts: Evaluated[] = [];
    if (wanted('clean', 0)) parts.push(await evaluate(model, imagesIdx.data, labels, 'clean', 0, false));
    const perCondition = Math.min(options.imagesPerCondition, count);
    const pixels = width * height;
    const sources = Array.from({ length: perCondition }, (_, i) =>
      imageFromBytes(imagesIdx.data.subarray(i * pixels, (i + 1) * pixels), width, height, 1),
    );
    for (const corruption of CORRUPTION_NAMES) {
      if (CORRUPTION_TABLE[corruption].rgbOnly) continue;
      for (let severity = 1; severity <= 5; severity++) {
        if (!wanted(corruption, severity)) continue;
        options.onProgress?.(`${corruption} ${severity}`);
        const seeds = Array.from({ length: perCondition }, (_, i) => frameSeed(CARD_SEED + severity, i));
        const corrupted = corruptBatch(sources, corruption, severity, seeds);
        const flat = new Uint8Array(perCondition * pixels);
        corrupted.forEach((image, i) => flat.set(imageToBytes(image), i * pixels));
        parts.push(
          await evaluate(model, flat, labels.subarray(0, perCondition), corruption, severity, heldOut.has(corruption)),
        );
      }
    }
    const rows = parts.map((p) => p.row);
    const clean = rows.find((r) => r.corruption === 'clean');
    const uDrop: Record<string, number> = {};
    for (const corruption of NOISE_AND_BLUR) {
      const s5 = rows.find((r) => r.corruption === corruption && r.severity === 5);
      if (clean && s5) uDrop[corruption] = clean.meanU - s5.meanU;
    }
    const corruptedParts = parts.filter((p) => p.row.corruption !== 'clean');
    const averaged = corruptedParts.length > 0 ? corruptedParts : parts;
    const meanOverCorruptions = {
      static: meanOver(averaged, 'static'),
      dynamic: meanOver(averaged, 'dynamic'),
      fused: meanOver(averaged, 'fused'),
    };
    const summary: ModelCard['summary'] = {
      cleanAccuracyFused: clean?.fused.accuracy ?? Number.NaN,
      meanOverCorruptions,
      uDropCleanToSeverity5: uDrop,
      uAurocOracleAdvantage: {
        overall: uAuroc(parts, () => true),
        disagreement: uAuroc(parts, (p, i) => p.disagree[i] === 1),
        heldOut: uAuroc(parts, (p) => p.row.heldOut),
      },
    };
    return {
      model: {
        file: basename(options.modelPath),
        sha256: sha256Hex(bytes),
        bytes: bytes.length,
        opset: metadata.opsetVersion,
        training,
      },
      evaluation: {
        testImages: count,
        imagesPerCorruptedCondition: perCondition,
        corruptionSeed: CARD_SEED,
        ece: 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)',
        nll: 'NLL(multiclass, from logits, natural log, mean)',
      },
      conditions: rows,
      summary,
      targets: cardTargets(parts, summary),
    };
  } finally {
    await model.close();
  }
}

/** Met, not met, or no claim: where the interval [lo, hi] lies against the threshold (at or above claimed). */
function atLeast(figure: StratifiedFigure, threshold: number): ClaimStatus {
  if (figure.lo >= threshold) return 'met';
  if (figure.hi < threshold) return 'not met';
  return 'inside the noise';
}

function fromVerdict(verdict: Verdict): ClaimStatus {
  return verdict === 'better' ? 'met' : verdict === 'worse' ? 'not met' : 'inside the noise';
}

/** All met, any not met, else no claim. */
function allOf(statuses: ClaimStatus[]): ClaimStatus {
  if (statuses.length === 0 || statuses.includes('not met')) return 'not met';
  return statuses.every((s) => s === 'met') ? 'met' : 'inside the noise';
}

const range = (f: StratifiedFigure, format: (v: number) => string): string =>
  `${format(f.value)} [${format(f.lo)}, ${format(f.hi)}]`;

/** The card's claims, each decided by its 95 % interval (seeded, so the card regenerates exactly). */
function cardTargets(parts: Evaluated[], summary: ModelCard['summary']): ModelCard['targets'] {
  const out: ModelCard['targets'] = [];
  const options = { seed: CARD_SEED, replicates: 1000 };
  const pct = (v: number) => `${(100 * v).toFixed(2)} %`;
  const three = (v: number) => v.toFixed(3);
  const clean = parts.find((p) => p.row.corruption === 'clean');
  const corrupted = parts.filter((p) => p.row.corruption !== 'clean');
  const sole = (statistic: HeadlineStatistic, sampleCount: number, weight = 1): Stratum => ({
    sampleCount,
    weight,
    evaluate: (_, indices) => statistic.evaluate(indices),
  });
  if (clean) {
    const accuracyOf = clean.statistics.fused.find((s) => s.name === 'accuracy')!;
    const figure = stratifiedFigure([sole(accuracyOf, clean.row.images)], options);
    out.push({
      target: 'clean accuracy of the fused output >= 90 %',
      status: atLeast(figure, 0.9),
      detail: `${range(figure, pct)}; ${figure.method}`,
    });
  }
  const byCorruption = new Map<string, Evaluated[]>();
  for (const part of corrupted)
    byCorruption.set(part.row.corruption, [...(byCorruption.get(part.row.corruption) ?? []), part]);
  // A rise between two groups of frames: the difference of their rates, each group resampled alone.
  const rise = (from: Evaluated, to: Evaluated, values: (p: Evaluated) => ArrayLike<number>): StratifiedFigure =>
    stratifiedFigure(
      [
        sole(meanStatistic('rate', 'rate', values(to), false), to.row.images, 1),
        sole(meanStatistic('rate', 'rate', values(from), false), from.row.images, -1),
      ],
      options,
    );
  if (clean) {
    const statuses: ClaimStatus[] = [];
    const details: string[] = [];
    for (const [corruption, rows] of byCorruption) {
      const s1 = rows.find((p) => p.row.severity === 1);
      const s5 = rows.find((p) => p.row.severity === 5);
      if (!s1 || !s5) continue;
      const overClean = rise(clean, s5, (p) => p.disagree);
      const overS1 = rise(s1, s5, (p) => p.disagree);
      statuses.push(allOf([atLeast(overClean, 1e-12), overS1.hi < 0 ? 'not met' : 'met']));
      details.push(`${corruption} +${three(overClean.value)} [${three(overClean.lo)}, ${three(overClean.hi)}]`);
    }
    out.push({
      target:
        'branches disagree more often at severity 5 than clean (interval above 0) and not less than at severity 1',
      status: allOf(statuses),
      detail: `${statuses.filter((s) => s === 'met').length} of ${statuses.length} corruptions; rise over clean: ${details.join(', ')}`,
    });
    const drops: Array<[string, StratifiedFigure]> = [];
    for (const corruption of NOISE_AND_BLUR) {
      const s5 = byCorruption.get(corruption)?.find((p) => p.row.severity === 5);
      if (s5) drops.push([corruption, rise(s5, clean, (p) => p.u)]);
    }
    out.push({
      target: 'mean u* falls by >= 0.15 from clean to severity 5 for every noise and blur corruption',
      status: allOf(drops.map(([, d]) => atLeast(d, 0.15))),
      detail: drops.map(([c, d]) => `${c} ${range(d, three)}`).join(', '),
    });
  }
  const { statistic: aurocOf, sampleCount } = uAurocStatistic(parts, () => true);
  const a = summary.uAurocOracleAdvantage.overall;
  const aurocFigure =
    a === null ? null : stratifiedFigure([sole(aurocOf, sampleCount)], { ...options, replicates: 200 });
  out.push({
    target: 'AUROC of u* for oracle advantage >= 0.70 (clean + corrupted)',
    status: aurocFigure === null ? 'not met' : atLeast(aurocFigure, 0.7),
    detail: aurocFigure === null ? 'undefined' : `${range(aurocFigure, three)}; ${aurocFigure.method}`,
  });
  if (corrupted.length > 0) {
    const m = summary.meanOverCorruptions;
    const better = m.static.accuracy >= m.dynamic.accuracy ? 'static' : 'dynamic';
    const counts = corrupted.map((p) => p.row.images);
    const versus = (branch: 'static' | 'dynamic', name: string) =>
      pairedDifferencesOverGroups(
        corrupted.map((p) => p.statistics[branch]),
        corrupted.map((p) => p.statistics.fused),
        counts,
        options,
      ).find((d) => d.name === name)!;
    const accuracyGain = versus(better, 'accuracy');
    out.push({
      target: `fused mean accuracy over corruptions above the better branch (${better})`,
      status: fromVerdict(accuracyGain.verdict),
      detail: `fused - ${better} ${pct(accuracyGain.difference)} [${pct(accuracyGain.interval.lo)}, ${pct(accuracyGain.interval.hi)}] (fused ${pct(m.fused.accuracy)}, static ${pct(m.static.accuracy)}, dynamic ${pct(m.dynamic.accuracy)}); ${methodWithNote(accuracyGain.interval.identity, accuracyGain.note)}`,
    });
    const eceGain = versus('dynamic', 'ECE');
    const four = (v: number) => v.toFixed(4);
    out.push({
      target: 'fused ECE below the dynamic branch (mean over corruptions)',
      status: fromVerdict(eceGain.verdict),
      detail: `fused - dynamic ${four(eceGain.difference)} [${four(eceGain.interval.lo)}, ${four(eceGain.interval.hi)}] (fused ${four(m.fused.ece)}, dynamic ${four(m.dynamic.ece)}); ${methodWithNote(eceGain.interval.identity, eceGain.note)}`,
    });
  }
  return out;
}

export function modelCardMarkdown(card: ModelCard): string {
  const pct = (v: number) => `${(100 * v).toFixed(2)}`;
  const lines = [
    `# Model card: ${card.model.file}`,
    '',
    'Generated by `npx knob model-card` (never edited by hand); `tests/integration/default-model.test.ts` checks it.',
    '',
    `- SHA-256 \`${card.model.sha256}\`, ${card.model.bytes} bytes, ONNX opset ${card.model.opset}`,
    `- Training: \`/usr/bin/python3 tools/train/train_knob.py\` (recipe and per-epoch losses in knob-fmnist.train-log.json): ${JSON.stringify(card.model.training)}`,
    `- Evaluation: Fashion-MNIST test set (${card.evaluation.testImages} images) clean; the first ${card.evaluation.imagesPerCorruptedCondition} test images for each corruption x severity (corruption seed ${card.evaluation.corruptionSeed}); fused output = (1 - u*) z_static + u* z_dyn.`,
    `- ECE: ${card.evaluation.ece}; NLL: ${card.evaluation.nll}.`,
    '',
    '## Targets',
    '',
    'Each claim is decided by its 95 % interval (percentile bootstrap, seeded): met when the interval lies on the claimed side, not met when on the other, and no claim ("inside the noise") when it straddles the threshold.',
    '',
    '| target | status | measured [95 % interval] |',
    '|---|---|---|',
    ...card.targets.map(
      (t) =>
        `| ${t.target} | ${t.status === 'met' ? 'met' : t.status === 'not met' ? '**not met**' : '*inside the noise*'} | ${t.detail} |`,
    ),
    '',
    '## Summary',
    '',
    `- Clean accuracy (fused): ${pct(card.summary.cleanAccuracyFused)} %`,
    `- Mean over corruptions and severities: accuracy static ${pct(card.summary.meanOverCorruptions.static.accuracy)} %, dynamic ${pct(card.summary.meanOverCorruptions.dynamic.accuracy)} %, fused ${pct(card.summary.meanOverCorruptions.fused.accuracy)} %; ECE static ${card.summary.meanOverCorruptions.static.ece.toFixed(4)}, dynamic ${card.summary.meanOverCorruptions.dynamic.ece.toFixed(4)}, fused ${card.summary.meanOverCorruptions.fused.ece.toFixed(4)}`,
    `- AUROC of u* for oracle advantage (dynamic loss < static loss): overall ${card.summary.uAurocOracleAdvantage.overall?.toFixed(3)}, disagreement subset ${card.summary.uAurocOracleAdvantage.disagreement?.toFixed(3)}, held-out corruptions ${card.summary.uAurocOracleAdvantage.heldOut?.toFixed(3)}`,
    '',
    '## Every condition',
    '',
    '| corruption | sev | held out | n | acc static | acc dyn | acc fused | NLL static | NLL dyn | NLL fused | ECE static | ECE dyn | ECE fused | mean u* | disagree |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...card.conditions.map(
      (r) =>
        `| ${r.corruption} | ${r.severity} | ${r.heldOut ? 'yes' : ''} | ${r.images} | ${pct(r.static.accuracy)} | ${pct(r.dynamic.accuracy)} | ${pct(r.fused.accuracy)} | ${r.static.nll.toFixed(3)} | ${r.dynamic.nll.toFixed(3)} | ${r.fused.nll.toFixed(3)} | ${r.static.ece.toFixed(4)} | ${r.dynamic.ece.toFixed(4)} | ${r.fused.ece.toFixed(4)} | ${r.meanU.toFixed(3)} | ${pct(r.disagreement)} |`,
    ),
    '',
  ];
  return lines.join('\n');
}
