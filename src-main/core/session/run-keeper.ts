import { KnobError } from '../../../src-shared/errors';
import type { RecentRuns } from '../../../src-shared/api/recent-runs';
import type { Logger } from '../logging/logger';
import { keepRecording } from '../recent-runs/keep-recording';
import type { RecentRunsStore } from '../recent-runs/recent-runs-store';
import { recordingOf, sourceOf, type State } from './session-states';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';

/** What the keeper reports: a run kept (the session's description changed), the folder's list, a failure. */
export interface RunKeeperEvents {
  kept(): void;
  listed(runs: RecentRuns): void;
  failed(error: KnobError): void;
}

/**
 * Keeps the session's recording as a recent run (keep-recording.ts) when it stops changing: on
 * pause, before it would be replaced, a second after the last label given while paused, and when
 * the session closes. A failure to keep is logged and reported, never lost silently, and the
 * recording stays unsaved. Without a store (no data folder) nothing is kept.
 */
export class RunKeeper {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: RecentRunsStore | null,
    private readonly logger: Logger,
    private readonly events: RunKeeperEvents,
  ) {}

  get enabled(): boolean {
    return this.store !== null;
  }

  async keep(state: State, gate: GateSettings, position: number): Promise<void> {
    const store = this.store;
    const recording = recordingOf(state);
    if (store === null || recording === null || !recording.unsaved || recording.frameCount === 0) return;
    const source = sourceOf(state);
    try {
      const playing = source === null ? null : { info: source.info, playsFile: source.frames !== null };
      if ((await keepRecording(store, recording, { source: playing, gate, position })) !== null) this.events.kept();
    } catch (error) {
      const message = (error as Error).message;
      this.logger.warn({ error: message }, 'the recording could not be kept as a recent run');
      this.events.failed(new KnobError('INTERNAL', `the recording could not be kept: ${message}`));
    }
    this.events.listed(store.describe());
  }

  /** Runs `keep` a second after the last call (labels given while paused). */
  soon(keep: () => void): void {
    if (this.store === null) return;
    this.cancel();
    this.timer = setTimeout(() => {
      this.timer = null;
      keep();
    }, 1000);
  }

  cancel(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
