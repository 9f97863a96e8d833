import type { ApiResult } from '../../../src-shared/api/contract';
import type { RecentRuns, RunAnnotation } from '../../../src-shared/api/recent-runs';
import { KnobError } from '../../../src-shared/errors';
import { replay } from '../../../src-shared/trace/replay';
import type { MetricsWorkerClient } from '../use-cases/metrics-worker-client';
import type { RecentRunsStore } from '../recent-runs/recent-runs-store';
import { storedProvenanceOf, unknownProvenance } from '../report/provenance';
import type { EmitEvent, Session } from '../session/session';
import { completeRecording } from '../session/session-recordings';

/**
 * The recent runs as the desk uses them (the session keeps each recording there when it stops
 * changing): the folder's list and size limit, a run opened as the current recording, runs
 * compared, and the operator's names, tags and notes of runs.
 */
export class RecentRunsService {
  constructor(
    private readonly session: Session,
    private readonly store: RecentRunsStore | null,
    private readonly metrics: MetricsWorkerClient,
    private readonly emit: EmitEvent,
  ) {}

  /** The folder as it is now: another process (a second host on the same folder) may have kept runs. */
  async list(): Promise<RecentRuns> {
    if (this.store === null) return { enabled: false, folder: null, limitBytes: 0, usedBytes: 0, runs: [] };
    return this.store.refresh();
  }

  async setLimit(limitBytes: number): Promise<RecentRuns> {
    const list = await this.requireStore().setLimit(limitBytes);
    this.emit('runs.changed', list);
    return list;
  }

  /**
   * A recent run becomes the current recording (paused); when the source it was recorded from is
   * open, the position moves to where the run left off.
   */
  async open(id: string, discard: boolean): Promise<ApiResult<'runs.open'>> {
    const store = this.requireStore();
    const path = store.path(id);
    this.session.allow('trace.load');
    const { run, file } = await store.read(id);
    const recording = await this.session.loadRecording(discard, async (recordings) => {
      const gate = this.session.knobs.current.gate;
      const output = file.run?.output ?? replay(file.trace, gate, { logits: 'kept classes too' });
      const options = {
        origin: 'loaded' as const,
        description: `recent run of ${run.keptAt}: ${run.description}`,
        provenance:
          storedProvenanceOf(file.context) ?? unknownProvenance(run.source?.description ?? 'unknown', run.description),
        path,
      };
      const missing = 'the recent run has no features of its width';
      const recording = completeRecording(recordings, options, { trace: file.trace, output }, missing);
      recording.markKept(id, path);
      const position =
        run.position === null || run.source === null ? undefined : { frame: run.position, source: run.source };
      return { recording, position };
    });
    return { path, frameCount: recording.frameCount, classCount: recording.trace.classCount };
  }

  /**
   * Two to eight recent runs, each at its recorded settings, side by side with each minus the first
   * (independent resampling).
   */
  async compare(ids: string[], signal?: AbortSignal): Promise<ApiResult<'runs.compare'>> {
    const store = this.requireStore();
    const read = await Promise.all(ids.map((id) => store.read(id)));
    return this.metrics.compareRuns(
      read.map(({ run, file }) => ({ trace: file.trace, settings: file.run?.settings ?? run.settings, run })),
      signal,
    );
  }

  /** The operator's name, tags and notes of a run; every listing shows them from now on. */
  async annotate(id: string, annotation: RunAnnotation): Promise<RecentRuns> {
    const list = await this.requireStore().annotate(id, annotation);
    this.emit('runs.changed', list);
    return list;
  }

  private requireStore(): RecentRunsStore {
    if (this.store === null)
      throw new KnobError('NOT_AVAILABLE', 'this backend keeps no recent runs (it was started without a data folder)');
    return this.store;
  }
}
