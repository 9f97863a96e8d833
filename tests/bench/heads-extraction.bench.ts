/**
 * Issue 31's extraction: the recording a Knob model is fitted on (make-knob-model.ts), at the
 * model's inference rate on both cores. On a real-sized network, a MobileNet-like 224 x 224 x 3
 * classifier of 1,000 classes (tests/support/mobilenet-like.ts) over a generated video, each in a
 * process of its own from the benchmark's build: `knob run` of the classifier as it is (its
 * inference rate in the app), of it with its features exposed (`knob features`) recording them,
 * and of the model make-knob-model.ts records with (the features followed by the image statistics,
 * image-statistics-graph.ts) recording them. Prints each run's frames a second (the engine's own
 * figure, model load excluded; the better of two runs each, taken in turn) and its ratio to the
 * first. Never fails on them.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseOnnxModel } from '../../src-main/core/deploy/feature-tensor';
import { withImageStatisticsInFeatures } from '../../src-main/core/deploy/image-statistics-graph';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { testPatternVideo } from '../support/fashion-video';
import { mobilenetLikeClassifier } from '../support/mobilenet-like';
import { buildInto } from './bench-build';
import { row } from './bench-timing';
import { measuredCommand } from './measured-command';

const BUILD_DIR = 'bench-output/heads-build';
const FOLDER = resolve('bench-output/heads-extraction');
const VIDEO_SECONDS = 30;

export function runHeadsExtractionBench(): void {
  process.stdout.write(
    `\nExtraction for the Knob heads (issue 31): a MobileNet-like 224 x 224 x 3, 1,000-class network over ${VIDEO_SECONDS * 30} frames of a generated video\n`,
  );
  buildInto(BUILD_DIR);
  mkdirSync(FOLDER, { recursive: true });
  const classifier = join(FOLDER, 'mobilenet-like.onnx');
  const withFeatures = join(FOLDER, 'with-features.onnx');
  const recorder = join(FOLDER, 'with-features-and-statistics.onnx');
  const video = join(FOLDER, 'field.mp4');
  try {
    writeFileSync(classifier, mobilenetLikeClassifier());
    try {
      testPatternVideo(video, VIDEO_SECONDS);
    } catch (error) {
      row('not measured', `ffmpeg could not make the video: ${(error as Error).message.trim().split('\n').pop()}`);
      return;
    }
    measuredCommand(BUILD_DIR, ['bin/knob.mjs', 'features', '--model', classifier, '--out', withFeatures]);
    // the input spec the app resolves from this model's shape (no sidecar, no metadata)
    const bytes = readFileSync(withFeatures);
    const spec: InputSpec = {
      name: parseOnnxModel(bytes, withFeatures).graph!.input[0]!.name,
      layout: 'NCHW',
      width: 224,
      height: 224,
      channels: 3,
      value_range: [0, 1],
      mean: [0],
      std: [1],
    };
    writeFileSync(recorder, withImageStatisticsInFeatures(bytes, withFeatures, spec));
    const runs = [
      { what: 'knob run, the classifier as it is', model: classifier, more: [] as string[] },
      {
        what: 'recording its features (knob features, knob run --record-features)',
        model: withFeatures,
        more: ['--record-features'],
      },
      {
        what: 'recording its features and the image statistics (as a make does)',
        model: recorder,
        more: ['--record-features'],
      },
    ].map((run) => ({ ...run, framesPerSecond: 0, peakMb: 0 }));
    // each run twice, in turn, the better of each kept: the machine is shared and noisy
    for (let round = 0; round < 2; round++)
      for (const run of runs) {
        const measured = measuredCommand(BUILD_DIR, [
          ...['tests/support/measured-cli.mjs', 'run', '--model', run.model, '--source', video],
          ...run.more,
          ...['--out', join(FOLDER, 'run'), '--json'],
        ]);
        const { framesPerSecond } = JSON.parse(measured.stdout) as { framesPerSecond: number };
        run.framesPerSecond = Math.max(run.framesPerSecond, framesPerSecond);
        run.peakMb = Math.max(run.peakMb, measured.peakMb);
      }
    const plain = runs[0]!.framesPerSecond;
    for (const run of runs)
      row(
        run.what,
        `${run.framesPerSecond.toFixed(0)} frames/s${run === runs[0] ? '' : ` (${(run.framesPerSecond / plain).toFixed(2)} of the classifier's)`}, peak ${run.peakMb.toFixed(0)} MB`,
      );
  } finally {
    rmSync(FOLDER, { recursive: true, force: true });
  }
}
