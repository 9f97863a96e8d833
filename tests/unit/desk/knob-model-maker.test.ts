/**
 * "Make a Knob model" (issue 31) in the desk's state: the call goes on the work bar with Cancel, a
 * cancelled one says nothing was written and is no error, a refusal lands in the make slot, and
 * the made model's card is kept until Load asks the backend for that model.
 */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../../src-shared/errors';
import type { HeadsCard } from '../../../src-shared/heads/heads-card';
import { ContractFakeApi, settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';

const figures = {
  frames: 1000,
  accuracyStatic: 0.82,
  accuracyDynamic: 0.75,
  accuracyFused: 0.83,
  eceFused: 0.05,
  aurocOracleAdvantage: 0.75,
  meanUClean: 0.55,
  meanUCorrupted: 0.43,
};
const card: HeadsCard = {
  model: { path: '/models/cnn.onnx', sha256: 'a'.repeat(64) },
  trace: { path: '/data/images', sha256: 'b'.repeat(64), labelledFrames: 5000, featureWidth: 64 },
  seed: 0,
  split: 'seeded random split (seed 0)',
  steps: ['static head'],
  validation: { heads: figures, recorded: { ...figures, contract: 'single-classifier' } },
  fitSeconds: 7.2,
};

describe('making a Knob model', () => {
  it('goes on the work bar; Cancel writes nothing and is no error; a refusal shows in its slot', async () => {
    const api = new ContractFakeApi().hold('model.makeKnob');
    const { desk } = await startedDesk({ api });
    const making = desk.knobModels.make('/data/images', '/models/cnn-knob.onnx');
    await settle();
    expect(desk.offline.work?.task).toBe('making cnn-knob.onnx from images');
    expect(desk.knobModels.busy).toBe(true);
    expect(api.waiting('model.makeKnob')[0]!.params).toEqual({
      dataPath: '/data/images',
      outPath: '/models/cnn-knob.onnx',
      seed: 0,
    });
    desk.offline.cancel();
    await making;
    expect([desk.offline.work, desk.knobModels.busy, desk.errors.makeModel]).toEqual([null, false, null]);
    expect(desk.knobModels.cancelled).toBe('making cnn-knob.onnx from images cancelled: nothing was written');

    const refused = desk.knobModels.make('/data/few', '/models/cnn-knob.onnx');
    await settle();
    api.waiting('model.makeKnob').at(-1)!.refuse(new KnobError('INVALID_INPUT', '/data/few: 300 images'));
    await refused;
    expect(desk.errors.makeModel).toMatch(/300 images/);
    expect(desk.knobModels.made).toBeNull();
  });

  it('sends the seed and the features tensor, keeps the card, and Load loads the model it wrote', async () => {
    const api = new ContractFakeApi().hold('model.makeKnob').hold('model.load');
    const { desk } = await startedDesk({ api });
    const making = desk.knobModels.make('/data/images', '/models/cnn-knob.onnx', { seed: 7, featuresNode: 'pool' });
    await settle();
    expect(api.waiting('model.makeKnob')[0]!.params).toMatchObject({ seed: 7, featuresNode: 'pool' });
    api.waiting('model.makeKnob')[0]!.answer({ path: '/models/cnn-knob.onnx', card, featuresFrom: 'cache' });
    await making;
    expect(desk.knobModels.made?.card.validation.heads.aurocOracleAdvantage).toBe(0.75);
    expect(desk.errors.makeModel).toBeNull();
    void desk.knobModels.load();
    await settle();
    expect(api.waiting('model.load')[0]!.params).toMatchObject({ path: '/models/cnn-knob.onnx' });
  });
});
