import type { z } from 'zod';

/**
 * The rules a calibrator spec must keep beyond its fields' types, checked where a spec is read
 * (settings file, bundle manifest, API), so a malformed spec never reaches the replay or the step
 * graph (an isotonic spec with more x than y exported a bundle whose graph failed in Gather):
 * - isotonic: x and y of one length, at least one knot; x strictly increasing (block end points);
 *   y non-decreasing within [0, 1];
 * - binning: one value per bin, B + 1 edges for B bins (the one-in-extra-bin rule adds a bin for
 *   scores at the top edge: one value per edge), edges non-decreasing within [0, 1] (equal-mass
 *   edges may tie), values within [0, 1];
 * - vector scaling K weights for K biases; matrix and Dirichlet K x K.
 */
type Context = z.RefinementCtx;

function issue(context: Context, path: Array<string | number>, message: string): void {
  context.addIssue({ code: 'custom', path, message });
}

export function checkIsotonicKnots(
  knots: { x: number[]; y: number[] },
  path: Array<string | number>,
  context: Context,
): void {
  const { x, y } = knots;
  if (x.length === 0) return issue(context, [...path, 'x'], 'needs at least one knot');
  if (x.length !== y.length) return issue(context, [...path, 'y'], `needs ${x.length} values, one per knot in x`);
  for (let i = 1; i < x.length; i++)
    if (!(x[i]! > x[i - 1]!)) return issue(context, [...path, 'x', i], 'knots must increase strictly');
  for (let i = 0; i < y.length; i++) {
    if (!(y[i]! >= 0 && y[i]! <= 1)) return issue(context, [...path, 'y', i], 'must lie in [0, 1]');
    if (i > 0 && !(y[i]! >= y[i - 1]!)) return issue(context, [...path, 'y', i], 'must not decrease');
  }
}

export function checkBinEdges(
  bins: { edges: number[]; values: number[] },
  extraTopBin: boolean,
  path: Array<string | number>,
  context: Context,
): void {
  const { edges, values } = bins;
  if (edges.length < 2) return issue(context, [...path, 'edges'], 'needs at least two edges');
  const expected = extraTopBin ? edges.length : edges.length - 1;
  if (values.length !== expected)
    return issue(context, [...path, 'values'], `needs ${expected} values for ${edges.length} edges`);
  for (let i = 0; i < edges.length; i++) {
    if (!(edges[i]! >= 0 && edges[i]! <= 1)) return issue(context, [...path, 'edges', i], 'must lie in [0, 1]');
    if (i > 0 && !(edges[i]! >= edges[i - 1]!)) return issue(context, [...path, 'edges', i], 'edges must not decrease');
  }
  for (let i = 0; i < values.length; i++)
    if (!(values[i]! >= 0 && values[i]! <= 1)) return issue(context, [...path, 'values', i], 'must lie in [0, 1]');
}

export function checkAffineShape(spec: { method: string; weights: number[]; bias: number[] }, context: Context): void {
  const k = spec.bias.length;
  if (k < 2) return issue(context, ['bias'], 'needs one bias per class (at least 2)');
  const weights = spec.method === 'vector' ? k : k * k;
  if (spec.weights.length !== weights)
    issue(
      context,
      ['weights'],
      `needs ${weights} weights for ${k} classes${spec.method === 'vector' ? '' : ' (K x K)'}`,
    );
}
