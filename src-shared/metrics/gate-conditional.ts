import { KnobError } from '../errors';
import { seededRandom } from '../random';
import { assignBins, binningIdentity, type BinningSpec } from './binning';

/**
 * Does the gate carry calibration evidence beyond confidence?
 *
 * Samples are binned by confidence and, independently, split into gate strata (terciles of g over
 * all samples). Statistic: T = sum_{bin b, stratum s} (n_bs / n) |gap_bs - gap_b|, gap = accuracy -
 * mean confidence. Under the null (given confidence, the stratum says nothing about correctness)
 * stratum labels are exchangeable within a confidence bin, so the null distribution comes from
 * permuting stratum labels within each bin (seeded). P-value (1 + #{T_perm >= T}) / (1 + R);
 * effect size (T - mean T_perm) / sd T_perm.
 */
export interface GateConditionalResult {
  identity: string;
  statistic: number;
  pValue: number;
  effectSize: number;
  nullMean: number;
  permutations: number;
  seed: number;
  /** Gap per (confidence bin, stratum) for display; null where a cell is empty. */
  gaps: (number | null)[][];
  strataEdges: [number, number];
}

export function gateConditionalCalibration(
  confidence: Float64Array,
  correct: Uint8Array,
  gate: Float64Array,
  options: { spec?: BinningSpec; permutations?: number; seed?: number } = {},
): GateConditionalResult {
  const n = confidence.length;
  if (n === 0 || gate.length !== n || correct.length !== n)
    throw new KnobError(
      'INVALID_INPUT',
      'gate-conditional test needs equal, non-empty confidence, correct and gate arrays',
    );
  const spec = options.spec ?? { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' };
  const permutations = options.permutations ?? 999;
  const seed = options.seed ?? 0;
  const bins = assignBins(confidence, spec);
  const sortedGate = Float64Array.from(gate).sort();
  const t1 = sortedGate[Math.floor(n / 3)];
  const t2 = sortedGate[Math.floor((2 * n) / 3)];
  const strata = new Int32Array(n);
  for (let i = 0; i < n; i++) strata[i] = gate[i] < t1 ? 0 : gate[i] < t2 ? 1 : 2;

  // members of each confidence bin, for the within-bin permutations
  const members: number[][] = Array.from({ length: bins.binCount }, () => []);
  for (let i = 0; i < n; i++) members[bins.binOf[i]].push(i);
  const binGap = new Float64Array(bins.binCount);
  for (let b = 0; b < bins.binCount; b++) {
    let gapSum = 0;
    for (const i of members[b]) gapSum += correct[i] - confidence[i];
    binGap[b] = members[b].length ? gapSum / members[b].length : 0;
  }
  const cellSum = new Float64Array(bins.binCount * 3);
  const cellCount = new Float64Array(bins.binCount * 3);
  const statistic = (labels: Int32Array): number => {
    cellSum.fill(0);
    cellCount.fill(0);
    for (let i = 0; i < n; i++) {
      const cell = bins.binOf[i] * 3 + labels[i];
      cellSum[cell] += correct[i] - confidence[i];
      cellCount[cell]++;
    }
    let t = 0;
    for (let cell = 0; cell < cellSum.length; cell++) {
      if (cellCount[cell] === 0) continue;
      t += (cellCount[cell] / n) * Math.abs(cellSum[cell] / cellCount[cell] - binGap[Math.floor(cell / 3)]);
    }
    return t;
  };
  const observed = statistic(strata);
  const gaps = Array.from({ length: bins.binCount }, (_, b) =>
    [0, 1, 2].map((s) => (cellCount[b * 3 + s] ? cellSum[b * 3 + s] / cellCount[b * 3 + s] : null)),
  );

  const random = seededRandom(seed);
  const permuted = Int32Array.from(strata);
  let atLeast = 0;
  let sum = 0;
  let sumSq = 0;
  for (let r = 0; r < permutations; r++) {
    for (const list of members) {
      for (let j = list.length - 1; j > 0; j--) {
        const k = Math.floor(random() * (j + 1));
        const a = list[j];
        const c = list[k];
        const tmp = permuted[a];
        permuted[a] = permuted[c];
        permuted[c] = tmp;
      }
    }
    const t = statistic(permuted);
    if (t >= observed) atLeast++;
    sum += t;
    sumSq += t * t;
  }
  const mean = sum / permutations;
  const sd = Math.sqrt(Math.max(0, sumSq / permutations - mean * mean));
  return {
    identity: `gate-conditional calibration(top-label, ${binningIdentity(spec)}, gate terciles, within-bin permutation null, ${permutations} permutations, seed ${seed})`,
    statistic: observed,
    pValue: (1 + atLeast) / (1 + permutations),
    effectSize: sd > 0 ? (observed - mean) / sd : 0,
    nullMean: mean,
    permutations,
    seed,
    gaps,
    strataEdges: [t1, t2],
  };
}
