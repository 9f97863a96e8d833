import { KnobError } from '../../../src-shared/errors';
import type { SessionStateKind } from '../../../src-shared/api/session-state';

/**
 * Every transition of the session in one table (docs/ARCHITECTURE.md draws it from this table, and
 * a test keeps the two equal). `from` lists the states the event is accepted in; `to` the states it
 * can lead to ('same' for events that act within a state). `discards` marks the events that replace
 * the current recording: with unsaved work in it they need `discard: true` ('unless-live': only when
 * the current recording is not the live one that playing would continue).
 */
export type SessionEvent =
  | 'model.load'
  | 'source.open'
  | 'source.configure'
  | 'stream.start'
  | 'stream.stop'
  | 'stream.end'
  | 'stream.seek'
  | 'stream.playback'
  | 'stream.resetGate'
  | 'camera.frame'
  | 'offline.start'
  | 'offline.end'
  | 'recording.reset'
  | 'recording.label'
  | 'trace.load'
  | 'trace.save';

export interface Transition {
  event: SessionEvent;
  from: readonly SessionStateKind[];
  to: readonly SessionStateKind[] | 'same';
  discards: boolean | 'unless-live';
  /** What it does, for the operator ("opening a source would discard ..."). */
  doing: string;
  /** When it happens. */
  note: string;
}

const ANY_BUT_OFFLINE = ['no-model', 'ready', 'playing', 'camera', 'paused'] as const;
const WITH_RECORDING = ['playing', 'camera', 'paused'] as const;

export const SESSION_TRANSITIONS: readonly Transition[] = [
  {
    event: 'model.load',
    doing: 'loading a model',
    from: ANY_BUT_OFFLINE,
    to: ['ready'],
    discards: true,
    note: 'a model is loaded; the source closes',
  },
  {
    event: 'source.open',
    doing: 'opening a source',
    from: ['ready', 'playing', 'camera', 'paused'],
    to: ['ready'],
    discards: true,
    note: 'a source of the requested kind opens',
  },
  {
    event: 'source.configure',
    doing: 'changing the corruption schedule',
    from: ['ready', 'playing', 'camera', 'paused'],
    to: 'same',
    discards: false,
    note: 'the schedule of the open source, from the next frame',
  },
  {
    event: 'stream.start',
    doing: 'starting a new recording',
    from: ['ready', 'paused'],
    to: ['playing', 'camera'],
    discards: 'unless-live',
    note: 'play: a file source in real time, or a camera',
  },
  {
    event: 'stream.stop',
    doing: 'pausing',
    from: ['playing', 'camera'],
    to: ['paused'],
    discards: false,
    note: 'pause; the recording stays',
  },
  {
    event: 'stream.end',
    doing: 'the end of the file',
    from: ['playing'],
    to: ['paused'],
    discards: false,
    note: 'the file ended (not looping) or failed',
  },
  {
    event: 'stream.seek',
    doing: 'seeking',
    from: ['ready', 'playing', 'paused'],
    to: 'same',
    discards: false,
    note: 'the source position moves; the recording stays',
  },
  {
    event: 'stream.playback',
    doing: 'changing the speed',
    from: ANY_BUT_OFFLINE,
    to: 'same',
    discards: false,
    note: 'speed (at once) and looping',
  },
  {
    event: 'stream.resetGate',
    doing: 'resetting the gate',
    from: ['ready', 'playing', 'camera', 'paused'],
    to: 'same',
    discards: false,
    note: 'the gate rests at g0 before the next frame',
  },
  {
    event: 'camera.frame',
    doing: 'a camera frame',
    from: ['camera'],
    to: 'same',
    discards: false,
    note: 'a frame pushed on the binary path',
  },
  {
    event: 'offline.start',
    doing: 'an offline run',
    from: ['ready', 'paused'],
    to: ['offline-run'],
    discards: true,
    note: 'the whole source at full speed',
  },
  {
    event: 'offline.end',
    doing: 'the end of the offline run',
    from: ['offline-run'],
    to: ['paused', 'ready'],
    discards: false,
    note: 'done, failed or cancelled (ready when no frame was computed)',
  },
  {
    event: 'recording.reset',
    doing: 'a new recording',
    from: ['paused'],
    to: ['ready', 'no-model'],
    discards: true,
    note: 'a new, empty recording (no-model when a trace was loaded without a model)',
  },
  {
    event: 'recording.label',
    doing: 'labelling',
    from: WITH_RECORDING,
    to: 'same',
    discards: false,
    note: 'operator feedback on a recorded frame',
  },
  {
    event: 'trace.load',
    doing: 'loading a trace',
    from: ANY_BUT_OFFLINE,
    to: ['paused'],
    discards: true,
    note: 'a saved trace (or a recent run) becomes the recording',
  },
  {
    event: 'trace.save',
    doing: 'saving the trace',
    from: WITH_RECORDING,
    to: 'same',
    discards: false,
    note: 'the recording is written; it is saved work then',
  },
];

const BY_EVENT = new Map(SESSION_TRANSITIONS.map((t) => [t.event, t]));

export function transitionOf(event: SessionEvent): Transition {
  return BY_EVENT.get(event)!;
}

/** Throws NOT_AVAILABLE, naming the state and what would make the event possible, unless `state` accepts it. */
export function assertAllowed(event: SessionEvent, state: SessionStateKind): Transition {
  const transition = transitionOf(event);
  if (!transition.from.includes(state)) {
    throw new KnobError(
      'NOT_AVAILABLE',
      `${event} is not possible while the session is ${state} (${refusalHint(state)})`,
    );
  }
  return transition;
}

function refusalHint(state: SessionStateKind): string {
  switch (state) {
    case 'no-model':
      return 'load a model first';
    case 'ready':
      return 'nothing is recorded or playing yet: play the source or load a trace';
    case 'offline-run':
      return 'an offline run is in progress: wait for it or cancel it';
    case 'playing':
      return 'pause the stream first';
    case 'camera':
      return 'a camera stream is running: pause it first';
    case 'paused':
      return 'the stream is paused: play it first';
  }
}

/** The state diagram of the table, as Mermaid (the one in docs/ARCHITECTURE.md is this text). */
export function sessionStateDiagram(): string {
  const lines = ['stateDiagram-v2', '  [*] --> no_model'];
  const id = (state: SessionStateKind): string => state.replace('-', '_');
  for (const t of SESSION_TRANSITIONS) {
    if (t.to === 'same') continue;
    for (const from of t.from) for (const to of t.to) lines.push(`  ${id(from)} --> ${id(to)} : ${t.event}`);
  }
  return lines.join('\n');
}
