import { seededRandom } from '../../src-shared/random';

/**
 * Three-class logits whose label's logit is the highest (2 + u against u, u uniform): a class is
 * never the label of a row another class dominates, so isotonic regression and histogram binning,
 * fitted one-vs-rest on these rows, map a low probability of a class to exactly 0.
 */
export function zeroProne(n: number, seed: number): { logits: Float64Array; labels: Int32Array; k: number } {
  const k = 3;
  const random = seededRandom(seed);
  const logits = new Float64Array(n * k);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = Math.floor(random() * k);
    for (let c = 0; c < k; c++) logits[i * k + c] = c === labels[i] ? 2 + random() : random();
  }
  return { logits, labels, k };
}

/**
 * Held-out zeroProne rows whose first `wrong` are confidently wrong (their label's logit -4, the
 * others 3): a true class the fit data made impossible.
 */
export function confidentlyWrong(n: number, seed: number, wrong: number): ReturnType<typeof zeroProne> {
  const rows = zeroProne(n, seed);
  for (let i = 0; i < wrong; i++)
    for (let c = 0; c < rows.k; c++) rows.logits[i * rows.k + c] = c === rows.labels[i] ? -4 : 3;
  return rows;
}
