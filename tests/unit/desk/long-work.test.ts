/**
 * Issue 32, deliverable 3: a calibrator comparison, a tune, the analyses, prediction sets, an export
 * and an import are long work the desk
 * shows and can stop. Each goes on the work bar (the comparison naming the frames it fits on), the
 * backend's progress moves the bar, Cancel stops the call, and a cancelled call is not an error.
 */
import { describe, expect, it } from 'vitest';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';
import { ContractFakeApi } from './contract-fake-api';

describe('long work on the work bar', () => {
  it('a calibrator comparison shows its frames and steps, and Cancel stops it without an error', async () => {
    const api = new ContractFakeApi().hold('calibrator.compare');
    const { desk } = await startedDesk({ api });
    const comparing = desk.compareCalibrators(['temperature', 'isotonic', 'vector'], {
      kind: 'time',
      evaluateFraction: 0.3,
    });
    await settle();
    expect(desk.offline.work).toMatchObject({ task: 'fitting calibrators on all recorded frames', done: 0, total: 3 });
    expect(desk.calibratorComparison.busy).toBe(true);
    api.emit('work.progress', {
      requestId: 7,
      task: 'fitting calibrators: isotonic regression',
      done: 1,
      total: 3,
      finished: false,
    });
    expect(desk.offline.work).toMatchObject({ task: 'fitting calibrators: isotonic regression', done: 1 });
    // the backend's last event ends its progress, but the call is still on its way: the bar stays
    api.emit('work.progress', {
      requestId: 7,
      task: 'fitting calibrators: vector scaling',
      done: 3,
      total: 3,
      finished: true,
    });
    expect(desk.offline.work).not.toBeNull();
    desk.offline.cancel();
    await comparing;
    expect(desk.offline.work).toBeNull();
    expect(desk.calibratorComparison.busy).toBe(false);
    expect(desk.errors.calibrators).toBeNull();
    expect(desk.calibratorComparison.result).toBeNull();
  });

  it("names the Calibration panel's window when it fits on the last frames", async () => {
    const api = new ContractFakeApi().hold('calibrator.compare');
    const { desk } = await startedDesk({ api });
    desk.metrics.window = 500;
    const comparing = desk.compareCalibrators(['temperature'], { kind: 'time', evaluateFraction: 0.3 });
    await settle();
    expect(desk.offline.work?.task).toBe('fitting calibrators on the last 500 recorded frames');
    expect(api.waiting('calibrator.compare')[0]!.params).toMatchObject({ lastFrames: 500 });
    desk.offline.cancel();
    await comparing;
  });

  it('a tune and the analyses go on the work bar too, and Cancel stops each without an error', async () => {
    const api = new ContractFakeApi().hold('tune.run').hold('analysis.run');
    const { desk } = await startedDesk({ api });
    const tuning = desk.tuning.run({ metric: 'ece', constraints: {}, split: 'none' });
    await settle();
    expect(desk.offline.work?.task).toBe('tuning the knobs on the recording');
    expect(desk.tuning.busy).toBe(true);
    desk.offline.cancel();
    await tuning;
    expect([desk.offline.work, desk.tuning.busy, desk.tuning.error]).toEqual([null, false, null]);

    const analysing = desk.runAnalyses();
    await settle();
    expect(desk.offline.work?.task).toBe('analysing the recording');
    desk.offline.cancel();
    await analysing;
    expect([desk.offline.work, desk.analyses.busy, desk.errors.analysis]).toEqual([null, false, null]);
  });

  it('an export, an import and the prediction sets go on the work bar; a cancelled one says what was left as it was', async () => {
    const api = new ContractFakeApi().hold('bundle.export').hold('bundle.import').hold('conformal.sets');
    const { desk } = await startedDesk({ api });
    const exporting = desk.files.exportTo('/tmp/out/night.knob.zip');
    await settle();
    expect(desk.offline.work?.task).toBe('exporting night.knob.zip');
    expect(desk.files.busy).toBe('export');
    api.emit('work.progress', {
      requestId: 3,
      task: 'the step graph and its Triton repository',
      done: 3,
      total: 6,
      finished: false,
    });
    expect(desk.offline.work).toMatchObject({ done: 3, total: 6 });
    desk.offline.cancel();
    await exporting;
    expect([desk.offline.work, desk.files.busy, desk.errors.export]).toEqual([null, null, null]);
    expect(desk.files.cancelled).toBe('exporting night.knob.zip cancelled: no bundle was written');

    const importing = desk.files.importFrom('C:\\bundles\\day.knob.zip');
    await settle();
    expect(desk.offline.work?.task).toBe('importing day.knob.zip');
    desk.offline.cancel();
    await importing;
    expect(desk.files.cancelled).toBe('importing day.knob.zip cancelled: the knobs are as they were');
    expect(desk.errors.export).toBeNull();

    const sets = desk.computePredictionSets({ alpha: 0.1, score: 'aps', groupBy: 'corruption' });
    await settle();
    expect(desk.offline.work?.task).toBe('prediction sets on all recorded frames');
    expect(api.waiting('conformal.sets')[0]!.params).toMatchObject({ alpha: 0.1, score: 'aps', groupBy: 'corruption' });
    desk.offline.cancel();
    await sets;
    expect([desk.offline.work, desk.predictionSets.busy, desk.errors.conformal]).toEqual([null, false, null]);
  });
});
