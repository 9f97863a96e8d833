/**
 * Issue 31 benchmark: the Knob heads fitted on 60,000 rows of backbone features (192 and 2,048 wide,
 * ten classes; target: every head in under 60 s on this machine after extraction), on one thread
 * and as the app fits them (heads-threads.ts: the two branches' heads at once), and one head's
 * softmax regression beside scikit-learn's LogisticRegression on the same rows and penalty, in the
 * same run (Debian's python3-sklearn). First the extraction (heads-extraction.bench.ts): the
 * recording at the model's inference rate. Prints times; never fails on them.
 */
import { fitSoftmaxRegression } from '../../src-shared/calibrators/softmax-regression';
import { fitKnobHeads } from '../../src-shared/heads/knob-heads';
import { fitKnobHeadsOnThreads } from '../../src-main/core/use-cases/heads-threads';
import { syntheticBackboneFeatures } from '../support/synthetic-features';
import { row, time } from './bench-timing';
import { runHeadsExtractionBench } from './heads-extraction.bench';
import { numpyBestMs } from './numpy-reference';

export async function runHeadsBench(): Promise<void> {
  runHeadsExtractionBench();
  process.stdout.write('\nKnob heads on backbone features (issue 31)\n');
  const rows = 60_000;
  const width = 192;
  // with image statistics beside the features, as the app records a dataset (make-knob-model.ts),
  // the corruption showing in both (the features as fitted before the statistics)
  const data = syntheticBackboneFeatures(rows, width, 10, 1, 'both');
  // the issue's range of widths: 192 (a small backbone) to 2,048 (a ResNet-50's pooled features)
  for (const [features, fitted] of [
    [width, data],
    [2048, syntheticBackboneFeatures(rows, 2048, 10, 1, 'both')],
  ] as const) {
    let steps: string[] = [];
    const oneThread = time(() => void (steps = fitKnobHeads(fitted, { seed: 1 }).steps), 1, 0);
    const started = performance.now();
    await fitKnobHeadsOnThreads(fitted, { seed: 1 });
    const onThreadsMs = performance.now() - started;
    const size = `${rows.toLocaleString('en')} x ${features} features`;
    row(`every head, ${size}, one thread`, `${oneThread.bestMs.toFixed(0)} ms`);
    row(
      `every head, ${size}, as the app fits (target < 60,000 ms)`,
      `${onThreadsMs.toFixed(0)} ms (${(oneThread.bestMs / onThreadsMs).toFixed(2)} x as fast as one thread)`,
    );
    for (const step of steps) process.stdout.write(`    ${step}\n`);
  }

  // one head on 20,000 rows (the heads' cap) against scikit-learn on the same rows
  const n = 20_000;
  const x = Float64Array.from(data.features.subarray(0, n * width));
  const labels = data.labels.subarray(0, n);
  const l2 = 1e-3;
  const ours = time(
    () => void fitSoftmaxRegression(x, width, labels, 10, { l2, gradientTolerance: 1e-5, maxIterations: 500 }),
    1,
    0,
  );
  const packed = new Float64Array(n * (width + 1));
  for (let i = 0; i < n; i++) {
    packed.set(x.subarray(i * width, (i + 1) * width), i * (width + 1));
    packed[i * (width + 1) + width] = labels[i]!;
  }
  const sklearn = numpyBestMs(
    packed,
    [n, width + 1],
    [
      'from sklearn.linear_model import LogisticRegression',
      `LogisticRegression(C=${1 / (l2 * n)}, solver="lbfgs", multi_class="multinomial", max_iter=500).fit(z[:, :-1], z[:, -1].astype(int))`,
    ].join('\n'),
    1,
  );
  row(
    `one head (softmax regression, L2 ${l2}), ${n.toLocaleString('en')} x ${width}`,
    `${ours.bestMs.toFixed(0)} ms; scikit-learn LogisticRegression(lbfgs) ${'ms' in sklearn ? `${sklearn.ms.toFixed(0)} ms (ratio ${(ours.bestMs / sklearn.ms).toFixed(2)})` : sklearn.skipped}`,
  );
}
