import { fuseRowInto } from '../fusion/convex-fusion';
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

  constructor(private readonly classCount: number) {
    this.chunk = new Float64Array(CHUNK_ROWS * classCount);
    this.scored = {
      probabilities: null,
      sampleNll: new Float64Array(CHUNK_ROWS),
      sampleBrier: new Float64Array(CHUNK_ROWS),
      top: allocateTopLabelScores(CHUNK_ROWS),
    };
  }

  /**
   * Entry j of `out` for frame frames[j] with label labels[j], fused at g[frame] (0 and 1 give the
   * branches bit for bit) and multiplied by `inverseTemperature` when it is not 1.
   */
  scoreInto(
    zStatic: LogitArray,
    zDyn: LogitArray,
    g: Float64Array,
    frames: Int32Array,
    labels: Int32Array,
    inverseTemperature: number,
    out: FusedRowScores,
  ): void {
    const k = this.classCount;
    const { chunk, chunkLabels, scored } = this;
    for (let from = 0; from < frames.length; from += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, frames.length - from);
      for (let r = 0; r < count; r++) {
        const i = frames[from + r]!;
        fuseRowInto(zStatic, zDyn, i * k, k, g[i]!, chunk, r * k);
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
}
