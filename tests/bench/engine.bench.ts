/**
 * The engine's figures (issue 5), the same measurement `knob bench` prints: bare onnxruntime-node
 * vs the engine's offline throughput and their ratio, gate + fusion per frame as a share of
 * inference, and the live path at 60 frames per second for 30 s with end-to-end percentiles.
 */
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { benchEngine } from '../../src-main/core/engine/engine-bench';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { benchLines } from '../../src-main/cli/commands/bench';

export async function runEngineBench(): Promise<void> {
  process.stdout.write('\n== engine: default model, CPU, batch 256 (knob bench) ==\n');
  const report = await benchEngine({
    model: ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH }),
    batchSize: 256,
    frames: 10240,
    liveSeconds: 30,
    liveFps: 60,
    rounds: 7,
  });
  process.stdout.write(`${benchLines(report).join('\n')}\n`);
}
