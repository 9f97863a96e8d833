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
    let u = random() * sum;
    let label = k - 1;
    for (let c = 0; c < k; c++) {
      u -= p[c];
      if (u <= 0) {
        label = c;
        break;
      }
    }
    labels[i] = label;
  }
  return { logits, labels };
}
