/**
 * One contract, two launchers of the inference process (inference-launcher.ts): child_process.fork
 * (Node: the CLI, browser mode) and Electron's utilityProcess (the shell, utility-inference.ts,
 * here through the fake 'electron' whose utilityProcess.fork starts a real child that has
 * process.parentPort and no process.send). Each loads the shipped model, runs the same frames to
 * the same outputs as onnxruntime in this process, reports a bad model as a typed error, comes
 * back after a crash, and ends its process on close.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { InferenceClient } from '../../src-main/core/inference/inference-client';
import { forkLauncher, type InferenceLauncher } from '../../src-main/core/inference/inference-launcher';
import { loadModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { utilityLauncher } from '../../src-main/electron/utility-inference';
import { utilityProcess } from '../support/fake-electron';
import { fashionMnistSample } from '../support/fashion-mnist';
import { processAlive } from '../support/process-alive';

const options = ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH, executionProviders: ['cpu'] });
const sample = fashionMnistSample(16);
const frames = new Uint8Array(16 * 784);
sample.images.forEach((image, i) => frames.set(image, i * 784));

const launchers: Array<[string, InferenceLauncher]> = [
  ['child_process.fork', forkLauncher],
  ['utilityProcess (Electron)', utilityLauncher],
];

describe.each(launchers)('the inference process through %s', (_name, launcher) => {
  it('loads the model and runs frames to the outputs onnxruntime gives in this process', async () => {
    const forksBefore = utilityProcess.forks.length;
    const client = await InferenceClient.start(options, { launcher });
    const local = await loadModel(options);
    try {
      const remote = await client.run(frames, 16, 0, { keepFeatures: true });
      const expected = await local.run(frames, 16, 0, true);
      expect(Array.from(remote.zStatic)).toEqual(Array.from(expected.zStatic));
      expect(Array.from(remote.zDyn)).toEqual(Array.from(expected.zDyn));
      expect(Array.from(remote.uRef)).toEqual(Array.from(expected.uRef));
      expect(Array.from(remote.features!)).toEqual(Array.from(expected.features!));
      expect(client.description.classCount).toBe(10);
      // the Electron launcher went through utilityProcess.fork, the Node one did not
      expect(utilityProcess.forks.length - forksBefore).toBe(launcher === utilityLauncher ? 1 : 0);
    } finally {
      await client.close();
      await local.close();
    }
  });

  it('reports a file that is not a model as a typed error', async () => {
    const notAModel = new URL('../fixtures/reference/dynamics.md', import.meta.url);
    expect(readFileSync(notAModel).length).toBeGreaterThan(0);
    await expect(InferenceClient.start({ ...options, path: notAModel.pathname }, { launcher })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('comes back after the process crashes, and ends it on close', async () => {
    const restarts: string[] = [];
    const client = await InferenceClient.start(options, {
      launcher,
      onRestart: (notice) => restarts.push(notice.reason),
    });
    const firstPid = client.pid!;
    client.simulateCrash();
    await expect.poll(() => restarts.length, { timeout: 20_000 }).toBe(1);
    expect(restarts[0]).toMatch(/inference process exited \(code 70\)/);
    await client.whenReady();
    const after = await client.run(frames, 4, 0);
    expect(after.zStatic.length).toBe(40);
    const secondPid = client.pid!;
    expect(secondPid).not.toBe(firstPid);
    await client.close();
    expect(processAlive(secondPid)).toBe(false);
  }, 60_000);
});
