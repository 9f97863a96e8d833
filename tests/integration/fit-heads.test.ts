/**
 * Knob heads fitted on a foreign classifier (issue 31, must-shows 3 and 4), end to end with the
 * real CLI, engine and onnxruntime: the CNN trained and exported by PyTorch the ordinary way
 * (tests/fixtures/models/foreign-cnn.onnx) gets its features exposed (`knob features`), records
 * them over the embedded stream under the training corruptions (`knob run --record-features`, the
 * extraction), and `knob fit-heads` writes a Knob-native model with its card. Held out: the card's
 * AUROC of u* for the oracle advantage is at least 0.70 and beats the model as recorded (the
 * single-classifier adapter); on clean frames the new model's fused accuracy is within 0.5 points of
 * the original's; on corruptions held out of the fit (shot and speckle noise, zoom blur, JPEG at
 * severity 5) its mean u* falls by at least 0.15 from clean. It loads as a Knob-native model and
 * exports to a bundle whose step graph passes `knob verify`.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import type { HeadsCard } from '../../src-main/core/use-cases/fit-heads';
import { knob } from '../support/knob-cli';

const FOREIGN = 'tests/fixtures/models/foreign-cnn.onnx';
const TRAINING = 'gaussian_noise,impulse_noise,gaussian_blur,motion_blur,contrast,fog,pixelate,elastic_transform';
const HELD_OUT = 'shot_noise,speckle_noise,zoom_blur,jpeg_compression';
const dir = mkdtempSync(join(tmpdir(), 'knob-fit-heads-'));
let backend: KnobBackend | null = null;
afterAll(async () => backend?.close());

async function run(model: string, out: string, ...schedule: string[]): Promise<string> {
  const result = await knob('run', '--model', model, '--source', 'default', ...schedule, '--out', join(dir, out));
  expect(result.status, result.stderr).toBe(0);
  return join(dir, out, 'trace.arrow');
}

/** The fused output's accuracy of a run (metrics.json's fused metrics). */
const fusedAccuracy = (out: string) =>
  (
    JSON.parse(readFileSync(join(dir, out, 'metrics.json'), 'utf8')) as {
      metrics: { fused: Array<{ name: string; value: number }> };
    }
  ).metrics.fused.find((m) => m.name === 'accuracy')!.value;

const meanU = async (trace: string) => {
  const { uRef } = (await readTraceFile(trace)).trace;
  return uRef.reduce((a, b) => a + b, 0) / uRef.length;
};

describe('knob fit-heads on a foreign classifier', () => {
  it('makes a Knob model whose u* tells the branches apart, keeps the accuracy, and deploys', async () => {
    const exposed = join(dir, 'foreign-features.onnx');
    expect((await knob('features', '--model', FOREIGN, '--out', exposed)).status).toBe(0);
    const fitTrace = await run(
      exposed,
      'fit',
      '--limit',
      '5000',
      '--record-features',
      '--schedule',
      'random',
      '--corruptions',
      TRAINING,
      '--hold',
      '50',
    );

    const knobModel = join(dir, 'foreign-knob.onnx');
    const fitted = await knob('fit-heads', '--model', exposed, '--trace', fitTrace, '--out', knobModel, '--json');
    expect(fitted.status, fitted.stderr).toBe(0);
    const card = JSON.parse(fitted.stdout) as HeadsCard;
    expect(JSON.parse(readFileSync(join(dir, 'foreign-knob.card.json'), 'utf8'))).toMatchObject({ seed: 0 });
    expect(card.validation.recorded.contract).toBe('single-classifier');
    expect(card.validation.heads.aurocOracleAdvantage).toBeGreaterThanOrEqual(0.7);
    expect(card.validation.heads.aurocOracleAdvantage!).toBeGreaterThan(card.validation.recorded.aurocOracleAdvantage!);

    // clean frames: the fused accuracy of the new model against the original classifier's
    const clean = ['--limit', '2000'];
    await run(FOREIGN, 'original-clean', ...clean);
    const cleanTrace = await run(knobModel, 'knob-clean', ...clean, '--mode', 'reset');
    expect(fusedAccuracy('knob-clean')).toBeGreaterThanOrEqual(fusedAccuracy('original-clean') - 0.005);
    // corruptions the heads never saw, at severity 5: u* falls
    const heldOut = ['--limit', '2000', '--schedule', 'random', '--corruptions', HELD_OUT, '--hold', '50'];
    const heldTrace = await run(
      knobModel,
      'knob-held',
      ...heldOut,
      '--min-severity',
      '5',
      '--max-severity',
      '5',
      '--mode',
      'reset',
    );
    expect((await meanU(cleanTrace)) - (await meanU(heldTrace))).toBeGreaterThanOrEqual(0.15);

    // the app takes it as a Knob-native model at once, and its bundle verifies
    backend = new KnobBackend();
    const model = await backend.handle('model.load', { path: knobModel });
    expect(model).toMatchObject({ contract: 'knob-native', featureCount: 64, classCount: 10 });
    const bundle = join(dir, 'foreign-knob.knob.zip');
    const exported = await knob('export', '--trace', cleanTrace, '--model', knobModel, '--out', bundle);
    expect(exported.status, exported.stderr).toBe(0);
    const verified = await knob('verify', bundle);
    expect(verified.status, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/equivalence: step graph = app within \S+ on \d+ frames/);
  }, 240_000);

  it('refuses a trace recorded with another model, naming both', async () => {
    const exposed = join(dir, 'foreign-features.onnx');
    const other = await run('default', 'shipped', '--limit', '300', '--record-features');
    const refused = await knob('fit-heads', '--model', exposed, '--trace', other, '--out', join(dir, 'x.onnx'));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/was recorded with another model .*; record it with .*foreign-features\.onnx/);
  }, 60_000);
});
