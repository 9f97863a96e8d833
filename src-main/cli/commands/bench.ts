import { benchEngine, type EngineBenchReport } from '../../core/engine/engine-bench';
import { MAX_BATCH, numberInRange, positiveInteger, parseCommandArgs } from '../cli-args';
import { MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';

/** knob bench: bare onnxruntime vs the engine, gate + fusion share, and the live path, in one run, on any model and source. */
export function benchLines(r: EngineBenchReport): string[] {
  const live = r.live.endToEnd;
  return [
    `model ${r.model}; provider ${r.executionProvider}${r.skippedProviders.length ? ` (skipped: ${r.skippedProviders.map((s) => s.name).join(', ')})` : ''}; ${r.frames} frames of ${r.source}`,
    `batch: ${r.batch}`,
    `frames a measurement: ${r.frames}, ${r.framesChosen}`,
    `bare onnxruntime-node      ${r.bare.framesPerSecond.toFixed(0).padStart(8)} frames/s (${(r.bare.inferenceMsPerFrame * 1000).toFixed(1)} µs/frame; median of ${r.rounds}: ${r.bare.rounds.map((v) => v.toFixed(0)).join(', ')})`,
    `bare, engine's layout      ${r.bareEngineLayout.framesPerSecond.toFixed(0).padStart(8)} frames/s (${r.bareEngineLayout.sessions} session${r.bareEngineLayout.sessions === 1 ? '' : 's'} x ${r.bareEngineLayout.threadsPerSession} thread${r.bareEngineLayout.threadsPerSession === 1 ? '' : 's'}, batches at once; median of ${r.rounds}: ${r.bareEngineLayout.rounds.map((v) => v.toFixed(0)).join(', ')})`,
    `engine offline             ${r.engine.framesPerSecond.toFixed(0).padStart(8)} frames/s (median of ${r.rounds}: ${r.engine.rounds.map((v) => v.toFixed(0)).join(', ')})`,
    `engine / bare              ${r.engineToBareRatio.toFixed(3).padStart(8)}   (target >= 0.95)`,
    `engine / bare, same layout ${r.engineToBareEngineLayoutRatio.toFixed(3).padStart(8)}   (the engine's own overhead)`,
    `gate + fusion per frame    ${r.gateFusion.nsPerFrame.toFixed(1).padStart(8)} ns = ${(r.gateFusion.fractionOfInference * 100).toFixed(3)} % of inference (target <= 1 %)`,
    `live ${r.live.fps} fps for ${r.live.seconds} s: ${r.live.processed}/${r.live.submitted} processed, ${r.live.dropped} dropped; end-to-end ${live ? `p50 ${live.p50Ms.toFixed(2)} ms, p95 ${live.p95Ms.toFixed(2)} ms, p99 ${live.p99Ms.toFixed(2)} ms` : 'n/a'} (target p95 < 10 ms, 0 dropped)${r.live.firstError === null ? '' : `; first drop: ${r.live.firstError}`}`,
    ...r.liveFullRate.map(
      (f) =>
        `live at full rate, ${f.framesInFlight} in flight: ${f.framesPerSecond.toFixed(0)} frames/s over ${f.frames} frames = ${(f.framesPerSecond / r.bareEngineLayout.framesPerSecond).toFixed(2)} of bare in the engine's layout; end-to-end p95 ${f.endToEnd ? f.endToEnd.p95Ms.toFixed(2) : 'n/a'} ms (queued behind the frames in flight)`,
    ),
  ];
}

export async function benchCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...MODEL_OPTIONS,
    source: { type: 'string', default: 'default' },
    batch: { type: 'string' },
    frames: { type: 'string' },
    'live-seconds': { type: 'string' },
    'live-fps': { type: 'string' },
    rounds: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const report = await benchEngine({
    model: modelOptionsFromArgs(values),
    source: values.source,
    batchSize: values.batch === undefined ? undefined : positiveInteger(values.batch, 'batch', 1, MAX_BATCH),
    frames: values.frames === undefined ? undefined : positiveInteger(values.frames, 'frames', 1, 1_000_000),
    liveSeconds: numberInRange(values['live-seconds'], 'live-seconds', 30, { min: 0, max: 3600, aboveMin: true }),
    liveFps: numberInRange(values['live-fps'], 'live-fps', 60, { min: 0, max: 1000, aboveMin: true }),
    rounds: positiveInteger(values.rounds, 'rounds', 7, 100),
    onProgress: (stage) => {
      if (!values.json && process.stderr.isTTY) process.stderr.write(`bench: ${stage}...\n`);
    },
  });
  process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : `${benchLines(report).join('\n')}\n`);
  return 0;
}
