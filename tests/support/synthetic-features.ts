import { IMAGE_STATISTICS } from '../../src-shared/heads/image-statistics';
import { normalDraw, seededRandom } from '../../src-shared/random';

/**
 * Backbone features whose truth is known, for the Knob heads (issue 31): `rows` rows of `width`
 * standard normal features; clean rows (every other row) carry their class strongly in feature
 * `class`, corrupted rows (severity 5) weakly, and a corruption's own trace in the last feature
 * (`traceIn` 'features'), in the last of seven image statistics beside them ('statistics': the
 * features show the corruption only as a weaker class signal), or in both. The model recorded a
 * dynamic branch trained on clean rows: logits 2 x_class, sure on clean rows, a guess on corrupted ones.
 */
export function syntheticBackboneFeatures(
  rows: number,
  width: number,
  classCount: number,
  seed: number,
  traceIn: 'features' | 'statistics' | 'both' = 'features',
) {
  const random = seededRandom(seed);
  const features = new Float32Array(rows * width);
  const labels = new Int32Array(rows);
  const severity = new Float64Array(rows);
  const recordedDynamic = new Float32Array(rows * classCount);
  const statistics = traceIn !== 'features' ? new Float32Array(rows * IMAGE_STATISTICS.length) : null;
  for (let i = 0; i < rows; i++) {
    const y = Math.floor(random() * classCount);
    const corrupted = i % 2 === 1;
    labels[i] = y;
    severity[i] = corrupted ? 5 : 0;
    for (let j = 0; j < width; j++) features[i * width + j] = normalDraw(random);
    features[i * width + y] += corrupted ? 0.6 : 3;
    if (traceIn !== 'statistics') features[i * width + width - 1] += corrupted ? 3 : 0;
    const s = IMAGE_STATISTICS.length;
    if (statistics !== null)
      for (let j = 0; j < s; j++) statistics[i * s + j] = normalDraw(random) + (j === s - 1 && corrupted ? 3 : 0);
    for (let c = 0; c < classCount; c++) recordedDynamic[i * classCount + c] = 2 * features[i * width + c]!;
  }
  return { features, width, labels, severity, classCount, recordedDynamic, statistics };
}
