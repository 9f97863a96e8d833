import { KnobError } from '../errors';
import { fuseRowInto } from '../fusion/convex-fusion';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { LogitArray } from '../fusion/logits';
import { allocateTopLabelScores, scoreRowsInto, type TopLabelScores } from './scores';

/** What a fused row's scoring writes, one entry per scored frame. */
export interface FusedRowScores {
  sampleNll: Float64Array;
  sampleBrier: Float64Array;
  top: TopLabelScores;
}

/** Rows fused and scored per call: a few hundred, so the chunk stays in cache whatever K. */
const CHUNK_ROWS = 256;

/**
 * The metric suite's row outputs (scoreRowsInto's: top-label pairs, NLL and Brier terms) of the
 * fused output of chosen frames at their gate values, optionally divided by a temperature, with
 * the same arithmetic as fusing every frame into one n x K buffer and scoring it, so the same bits,
 * in memory of a chunk of rows whatever the frame count: the fused logits and probabilities of
 * every frame are never held. The buffers are allocated once per scorer.
 */
export class FusedRowScorer {
  private readonly chunk: Float64Array;
  private readonly chunkLabels = new Int32Array(CHUNK_ROWS);
  private readonly scored: FusedRowScores & { probabilities: null };
  /** One fused row, then its exp(z - max) terms (topLabelInto). */
  private readonly row: Float64Array;

  constructor(private readonly classCount: number) {
    this.chunk = new Float64Array(CHUNK_ROWS * classCount);
    this.row = new Float64Array(classCount);
    this.scored = {
      probabilities: null,
      sampleNll: new Float64Array(CHUNK_ROWS),
      sampleBrier: new Float64Array(CHUNK_ROWS),
      top: allocateTopLabelScores(CHUNK_ROWS),
    };
  }

  /**
   * Entry j of `out` for frame frames[j] with label labels[j], fused at g[frame] (0 and 1 give the
   * branches bit for bit) and multiplied by `inverseTemperature` when it is not 1. The frame's
   * logits are row frames[j] of zStatic and zDyn, or row j where `byRow` (the caller gathered them).
   */
  scoreInto(
    zStatic: LogitArray,
    zDyn: LogitArray,
    g: Float64Array,
    frames: Int32Array,
    labels: Int32Array,
    inverseTemperature: number,
    out: FusedRowScores,
    byRow = false,
  ): void {
    const k = this.classCount;
    const { chunk, chunkLabels, scored } = this;
    for (let from = 0; from < frames.length; from += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, frames.length - from);
      for (let r = 0; r < count; r++) {
        const i = frames[from + r]!;
        fuseRowInto(zStatic, zDyn, (byRow ? from + r : i) * k, k, g[i]!, chunk, r * k);
        if (inverseTemperature !== 1) for (let c = r * k; c < (r + 1) * k; c++) chunk[c]! *= inverseTemperature;
        chunkLabels[r] = labels[from + r]!;
      }
      scoreRowsInto(chunk, chunkLabels, k, 0, count, scored);
      out.sampleNll.set(scored.sampleNll.subarray(0, count), from);
      out.sampleBrier.set(scored.sampleBrier.subarray(0, count), from);
      out.top.confidence.set(scored.top.confidence.subarray(0, count), from);
      out.top.predicted.set(scored.top.predicted.subarray(0, count), from);
      out.top.correct.set(scored.top.correct.subarray(0, count), from);
    }
  }

  /**
   * The top-label pairs alone of the same fused rows as scoreInto (what ECE, equal-mass ECE and
   * SmoothECE read), with its arithmetic for them: the fusion of fuseRowInto (then the temperature),
   * the softmax's max, exp(z - max) terms and their sum in the same order, and the first largest of
   * e_k / sum as scoreRowsInto takes it; so the same bits, without the probabilities, NLL and
   * Brier terms nobody reads (the tuner's 400 x 10,000 ECE sweep: 0.83 -> 0.64 s on one thread).
   */
  topLabelInto(
    zStatic: LogitArray,
    zDyn: LogitArray,
    g: Float64Array,
    frames: Int32Array,
    labels: Int32Array,
    inverseTemperature: number,
    top: TopLabelScores,
    byRow = false,
  ): void {
    const k = this.classCount;
    const row = this.row;
    const scaled = inverseTemperature !== 1;
    const { confidence, predicted, correct } = top;
    for (let j = 0; j < frames.length; j++) {
      const offset = (byRow ? j : frames[j]!) * k;
      const gi = g[frames[j]!]!;
      const gate = gi < 0 ? 0 : gi > 1 ? 1 : gi; // clampGate, written out
      const keep = 1 - gate;
      let max = -Infinity;
      let logitSum = 0;
      for (let c = 0; c < k; c++) {
        let z = keep * zStatic[offset + c]! + gate * zDyn[offset + c]!;
        if (scaled) z *= inverseTemperature;
        row[c] = z;
        logitSum += z;
        if (z > max) max = z;
      }
      if (!Number.isFinite(logitSum)) refuseRow(row, frames[j]!);
      let sum = 0;
      for (let c = 0; c < k; c++) {
        const e = expNonPositive(row[c]! - max);
        row[c] = e;
        sum += e;
      }
      const inv = 1 / sum;
      let best = 0;
      let bestProbability = -1;
      for (let c = 0; c < k; c++) {
        const p = row[c]! * inv;
        if (p > bestProbability) {
          bestProbability = p;
          best = c;
        }
      }
      confidence[j] = bestProbability;
      predicted[j] = best;
      correct[j] = best === labels[j] ? 1 : 0;
    }
  }
}

/** A fused row that does not sum to a finite number, refused as scoreRowsInto refuses it. */
function refuseRow(row: Float64Array, frame: number): never {
  for (let c = 0; c < row.length; c++)
    if (!Number.isFinite(row[c]))
      throw new KnobError('INVALID_INPUT', `logit ${c} of sample ${frame} is not finite (${row[c]})`);
  throw new KnobError('INVALID_INPUT', `the logits of sample ${frame} are too large to sum in float64`);
}
