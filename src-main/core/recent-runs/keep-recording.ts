import type { SourceInfo } from '../../../src-shared/api/session-state';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Recording } from '../recording/recording';
import type { RecentRunsStore } from './recent-runs-store';

/** What the session knows besides the recording when it keeps it: the source it plays and where. */
export interface KeepContext {
  /** The open source, or null (a loaded recording is described by its own provenance). */
  source: { info: SourceInfo; playsFile: boolean } | null;
  gate: GateSettings;
  /** The playback position, where the run resumes when its source is open again. */
  position: number;
}

/**
 * Keeps `recording`, which holds frames or labels no file has, as a recent run (the same run again
 * when it was kept before); returns the kept run's id, or null when the store did not keep it.
 */
export async function keepRecording(
  store: RecentRunsStore,
  recording: Recording,
  context: KeepContext,
): Promise<string | null> {
  const revision = recording.revision;
  const { trace, output } = recording.frozen();
  const source = recording.origin === 'loaded' ? null : context.source;
  const last = recording.provenance.schedule?.at(-1) ?? null;
  const kept = await store.keep({
    trace,
    run: { settings: context.gate, output },
    provenance: recording.provenance,
    id: recording.keptAs,
    description: {
      description: recording.description,
      origin: recording.origin,
      model: recording.provenance.model?.paths.join(' + ') ?? null,
      source:
        source === null
          ? null
          : {
              kind: source.info.kind,
              path: source.info.path,
              frameRateHz: source.info.frameRateHz,
              description: source.info.description,
            },
      schedule: last?.schedule ?? null,
      seed: last?.seed ?? 0,
      settings: context.gate,
      frameCount: trace.frameCount,
      labelledFrameCount: recording.labelledFrameCount,
      position: source?.playsFile === true ? context.position : null,
    },
  });
  if (kept === null) return null;
  recording.markKept(kept.id, store.path(kept.id), revision);
  return kept.id;
}
