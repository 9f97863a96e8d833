import { wrapFootnote } from './footnotes';

/**
 * The layout the probability figures share (reliability diagram, TCE view): a square plot of
 * [0, 1] on the y axis with room for tick labels on the left, a strip of counts under it, and the
 * footnotes wrapped to the figure's width.
 */
export interface SquareLayout {
  width: number;
  left: number;
  top: number;
  /** side of the square plot, in pixels */
  side: number;
  /** top of the count strip under the x axis */
  stripTop: number;
  notes: string[];
  /** y pixel of a probability */
  y: (value: number) => number;
}

export function squareLayout(width: number, footnotes: string[] = []): SquareLayout {
  const left = 42;
  const right = 18;
  const top = 10;
  const side = width - left - right;
  return {
    width,
    left,
    top,
    side,
    stripTop: top + side + 26,
    notes: footnotes.flatMap((n) => wrapFootnote(n, width)),
    y: (value) => top + (1 - value) * side,
  };
}
