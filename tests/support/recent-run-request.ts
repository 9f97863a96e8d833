import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { replay } from '../../src-shared/trace/replay';
import type { KeepRequest } from '../../src-main/core/recent-runs/recent-runs-store';
import { unknownProvenance } from '../../src-main/core/report/provenance';
import { syntheticTrace } from './synthetic-trace';

/** What the session hands the recent-runs store to keep: a synthetic recording of `frames`. */
export function keepRequest(frames: number, seed: number, id: string | null = null): KeepRequest {
  const trace = syntheticTrace({ frames, seed });
  return {
    trace,
    run: { settings: DEFAULT_GATE_SETTINGS, output: replay(trace, DEFAULT_GATE_SETTINGS) },
    provenance: unknownProvenance('synthetic', 'test'),
    id,
    description: {
      description: `synthetic ${seed}`,
      origin: 'offline',
      model: null,
      source: null,
      schedule: null,
      seed: 0,
      settings: DEFAULT_GATE_SETTINGS,
      frameCount: frames,
      labelledFrameCount: frames,
      position: null,
    },
  };
}
