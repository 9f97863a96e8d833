import { KnobError } from '../../../src-shared/errors';
import type { Logger } from '../logging/logger';
import type { ModelLease } from './model-lease';
import { recordingOf, type State } from './session-states';
import { assertAllowed, transitionOf, type SessionEvent } from './transitions';

/** How a transition is asked for: its discard flag, and checks that must pass before the discard rule. */
export interface TransitionRequest {
  discard?: boolean;
  check?: () => void | Promise<void>;
  /** The transition replaces the model: from its checks on, the lease refuses probes. */
  loadsModel?: boolean;
}

/**
 * SESSION_TRANSITIONS executed: the current state, one transition at a time in the order asked
 * for; each refused unless the state accepts its event, its discard rule read from the table, and
 * the state it enters checked against the table's `to` (a state the table does not list for the
 * event is an internal error, not a silent move). `keep` keeps the current recording as a recent
 * run (so nothing needs discarding); `entered` tells the views.
 */
export class StateMachine {
  private current: State = { kind: 'no-model' };
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly logger: Logger,
    private readonly lease: ModelLease,
    private readonly keep: () => Promise<void>,
    private readonly entered: (state: State) => void,
  ) {}

  get state(): State {
    return this.current;
  }

  /** Work that must not interleave with a transition (keeping a run, closing). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `event`: refused unless the state accepts it, then the request's checks, then (for an
   * event the table marks as discarding) the discard rule, then the work.
   */
  run<T>(event: SessionEvent, request: TransitionRequest, work: () => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      assertAllowed(event, this.current.kind);
      await request.check?.();
      const release = request.loadsModel === true ? this.lease.beginLoading() : null;
      try {
        if (transitionOf(event).discards === true) await this.requireDiscardable(event, request.discard ?? false);
        return await work();
      } finally {
        release?.();
      }
    });
  }

  /** The one way into a new state: refused when the table does not lead from `event` to it. */
  enter(next: State, event: SessionEvent): void {
    const from = this.current.kind;
    const to = transitionOf(event).to;
    if (!(to === 'same' ? next.kind === from : to.includes(next.kind)))
      throw new KnobError('INTERNAL', `${event} may not lead from ${from} to ${next.kind} (SESSION_TRANSITIONS)`);
    const previous = recordingOf(this.current);
    this.current = next;
    const recording = recordingOf(next);
    // a live drift watch's thread lives as long as its recording is the session's
    if (previous !== null && previous !== recording) previous.driftWatch?.stop('the recording was replaced');
    this.logger.info(
      { event, from, to: next.kind, recording: recording?.id ?? null },
      `session ${from} -> ${next.kind}`,
    );
    this.entered(next);
  }

  /** The same state with another description of its parts (a camera's identity): no transition. */
  describe(next: State): void {
    if (next.kind !== this.current.kind)
      throw new KnobError('INTERNAL', `a description may not change the state (${this.current.kind} to ${next.kind})`);
    this.current = next;
  }

  /** Back to no-model when the session closes (a live drift watch's thread ends). */
  reset(): void {
    recordingOf(this.current)?.driftWatch?.stop('the session closed');
    this.current = { kind: 'no-model' };
  }

  /**
   * Refuses (and changes nothing) when `event` would replace a recording with unsaved work. With
   * recent runs, the recording is kept first, so nothing is lost and nothing needs asking; only a
   * recording the folder cannot hold (its size limit) is refused.
   */
  async requireDiscardable(event: SessionEvent, discard: boolean): Promise<void> {
    if (!discard) await this.keep();
    const recording = recordingOf(this.current);
    if (discard || recording === null || !recording.unsaved) return;
    const saved = recording.path === null ? 'never saved' : `changed since it was saved to ${recording.path}`;
    const doing = transitionOf(event).doing;
    throw new KnobError(
      'WOULD_DISCARD',
      `${doing[0].toUpperCase()}${doing.slice(1)} would discard the current recording (${recording.frameCount} frames, ${recording.labelledFrameCount} labelled, ${saved})`,
    );
  }
}
