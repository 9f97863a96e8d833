/**
 * Issue 17's first must-show, on the real thing: the shipped model over 900 frames of the embedded
 * stream at 30 fps with a shot-noise step schedule (severity 1 -> 5 -> 1), replayed at zeta 0.3,
 * 0.7 and 1.0 with wn = 6 rad/s (ZOH and Tustin); a discrete second-order model fitted to the
 * recorded (u*, g) pairs alone recovers zeta and wn within 1 %.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { identifySecondOrder } from '../../src-shared/gate/identify-second-order';
import { replay } from '../../src-shared/trace/replay';
import type { Trace } from '../../src-shared/trace/trace';
import { runOffline } from '../../src-main/core/engine/offline-run';
import { InferenceClient } from '../../src-main/core/inference/inference-client';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { openSourcePath } from '../../src-main/core/sources/open-source';

let client: InferenceClient | null = null;
afterAll(() => client?.close());

async function recordedStream(): Promise<Trace> {
  client = await InferenceClient.start(
    ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH, executionProviders: ['cpu'] }),
  );
  const source = await openSourcePath('default', { target: client.description.input, frameRateHz: 30 });
  const result = await runOffline({
    client,
    source,
    schedule: {
      kind: 'step',
      corruption: 'shot_noise',
      levels: [
        { atFrame: 0, severity: 1 },
        { atFrame: 300, severity: 5 },
        { atFrame: 600, severity: 1 },
      ],
    },
    streamSeed: 17,
    settings: DEFAULT_GATE_SETTINGS,
    batchSize: 128,
    maxFrames: 900,
  });
  expect(result.error).toBeNull();
  return result.trace;
}

describe('the gate identified from a real recording', () => {
  it('recovers zeta and wn within 1 % at zeta 0.3, 0.7 and 1.0 (wn 6 rad/s, 30 fps), ZOH and Tustin', async () => {
    const trace = await recordedStream();
    const dt = trace.timestampsSeconds[1]! - trace.timestampsSeconds[0]!;
    expect(dt).toBeCloseTo(1 / 30, 12);
    // u* of the shipped model lies in [0, 1]: the gate saw it unclamped
    expect(Math.min(...trace.uRef)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...trace.uRef)).toBeLessThanOrEqual(1);
    for (const discretization of ['zoh', 'tustin'] as const)
      for (const zeta of [0.3, 0.7, 1.0]) {
        const settings: GateSettings = { ...DEFAULT_GATE_SETTINGS, discretization, zeta, wnRadPerSec: 6 };
        const { g } = replay(trace, settings);
        const found = identifySecondOrder(Float64Array.from(trace.uRef), g, dt, settings);
        const label = `${discretization} zeta ${zeta}`;
        expect(Math.abs(found.zeta / zeta - 1), label).toBeLessThan(0.01);
        expect(Math.abs(found.wnRadPerSec / 6 - 1), label).toBeLessThan(0.01);
      }
  }, 120_000);
});
