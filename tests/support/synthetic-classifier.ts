import { normalDraw, seededRandom } from '../../src-shared/random';

/**
 * Logits and labels with a known calibration: labels are drawn from softmax(z / T) (so temperature
 * scaling should find T) from logits of a given scale.
 */
export function syntheticClassifier(options: {
  n: number;
  classCount: number;
  temperature: number;
  scale?: number;
  seed?: number;
}) {
  const { n, classCount: k, temperature } = options;
  const random = seededRandom(options.seed ?? 1);
  const logits = new Float64Array(n * k);
  const labels = new Int32Array(n);
  const p = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let c = 0; c < k; c++) {
      logits[i * k + c] = (options.scale ?? 3) * normalDraw(random);
      max = Math.max(max, logits[i * k + c] / temperature);
    }
    let sum = 0;
    for (let c = 0; c < k; c++) {
      p[c] = Math.exp(logits[i * k + c] / temperature - max);
      sum += p[c];
    }
    labels[i] = drawCategory(p, sum, random);
  }
  return { logits, labels };
}

/** A class drawn with probability weights[c] / sum. */
export function drawCategory(weights: Float64Array, sum: number, random: () => number): number {
  let u = random() * sum;
  for (let c = 0; c < weights.length; c++) {
    u -= weights[c];
    if (u <= 0) return c;
  }
  return weights.length - 1;
}

/**
 * A classifier whose miscalibration differs by row in a way its logits reveal (what parameterized
 * temperature scaling is for): half the rows are hard (true logits 0.3 g, g ~ N(0, 1)) and shown
 * 3x too confident, half are easy (6 g) and shown 2x too unsure. One temperature cannot fix both;
 * a temperature read off the logits' spread can.
 */
export function rowDependentMiscalibration(options: { n: number; classCount: number; seed: number }) {
  const { n, classCount: k } = options;
  const random = seededRandom(options.seed);
  const logits = new Float64Array(n * k);
  const labels = new Int32Array(n);
  const truth = new Float64Array(k);
  const p = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    const hard = random() < 0.5;
    const [spread, shown] = hard ? [0.3, 3] : [6, 0.5];
    let max = -Infinity;
    for (let c = 0; c < k; c++) {
      truth[c] = spread * normalDraw(random);
      max = Math.max(max, truth[c]);
    }
    let sum = 0;
    for (let c = 0; c < k; c++) {
      p[c] = Math.exp(truth[c] - max);
      sum += p[c];
      logits[i * k + c] = shown * truth[c];
    }
    labels[i] = drawCategory(p, sum, random);
  }
  return { logits, labels };
}
