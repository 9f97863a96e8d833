import type { KnobErrorPayload } from '../errors';
import { FILE_KIND_EXTENSIONS } from './file-kinds';
import type { CancelEnvelope, EventEnvelope, RequestEnvelope, ResponseEnvelope } from './envelope';

/**
 * What the Electron preload exposes to the renderer as `window.knobBridge` (contextBridge): the
 * request, cancel and event channels, the binary frame path, the native open dialog and the path of
 * a dropped file; nothing else of Electron or Node.
 */
export interface KnobBridge {
  request(message: RequestEnvelope): Promise<ResponseEnvelope>;
  /** Cancels the request with that id (its work stops; it answers CANCELLED). */
  cancel(message: CancelEnvelope): void;
  onEvent(listener: (message: EventEnvelope) => void): () => void;
  /** The binary frame path: one encoded frame packet (frame-packet.ts) over a MessagePort. */
  sendFrame(packet: Uint8Array): void;
  /** The native open-file dialog; resolves to the chosen path, or null when cancelled. */
  openFileDialog(purpose: FileDialogPurpose): Promise<string | null>;
  /** The path of a file dropped on the window (Electron's webUtils; pages never see paths otherwise). */
  pathForFile(file: DroppedFile): string;
  /** The shell's commands to the page (its menus, a file opened with the app, a recovered crash). */
  onShellCommand(listener: (command: ShellCommand) => void): () => void;
}

/**
 * What the desktop shell asks the page to do. The page does it as if the operator had done it in
 * the desk, asking before anything recorded would be discarded.
 */
export type ShellCommand =
  /** Open a file or folder the way its kind says (file-kinds.ts): chosen in a menu, passed to the app, opened from the OS. */
  | { command: 'open'; path: string }
  /** Export the tuned calibrator as a bundle to this path (chosen in the native save dialog). */
  | { command: 'export-bundle'; path: string }
  /** Reopen a recent run. */
  | { command: 'open-run'; id: string }
  /** Something the operator should know (a recovered crash). */
  | { command: 'notice'; message: string };

/** Every function of KnobBridge, by name (the Electron tests check the preload exposes exactly these). */
export const KNOB_BRIDGE_FUNCTIONS = [
  'request',
  'cancel',
  'onEvent',
  'sendFrame',
  'openFileDialog',
  'pathForFile',
  'onShellCommand',
] as const satisfies ReadonlyArray<keyof KnobBridge>;
// A function added to KnobBridge and not to the list above fails to compile here.
type UnlistedBridgeFunction = Exclude<keyof KnobBridge, (typeof KNOB_BRIDGE_FUNCTIONS)[number]>;
export const BRIDGE_FUNCTIONS_COMPLETE: [UnlistedBridgeFunction] extends [never] ? true : never = true;

/** A DOM File as src-shared may name it (no DOM types here): what a drop event carries. */
export interface DroppedFile {
  readonly name: string;
  readonly size: number;
}

export const FILE_DIALOG_PURPOSES = ['model', 'dataset', 'video', 'trace', 'settings'] as const;
export type FileDialogPurpose = (typeof FILE_DIALOG_PURPOSES)[number];

/** A purpose the dialog knows (own keys only: 'toString' or '__proto__' are not purposes). */
export function isFileDialogPurpose(value: unknown): value is FileDialogPurpose {
  return typeof value === 'string' && (FILE_DIALOG_PURPOSES as readonly string[]).includes(value);
}

const withoutDots = (extensions: readonly string[]) => extensions.map((e) => e.slice(1));

/** The file types the native open dialog offers for each purpose (file-kinds.ts). */
export const FILE_DIALOG_FILTERS: Record<FileDialogPurpose, ReadonlyArray<{ name: string; extensions: string[] }>> = {
  model: [{ name: 'ONNX models', extensions: withoutDots(FILE_KIND_EXTENSIONS.model) }],
  dataset: [{ name: 'Datasets (IDX, .npz)', extensions: withoutDots(FILE_KIND_EXTENSIONS.dataset) }],
  video: [{ name: 'Videos', extensions: withoutDots(FILE_KIND_EXTENSIONS.video) }],
  trace: [{ name: 'Knob traces (Arrow)', extensions: withoutDots(FILE_KIND_EXTENSIONS.trace) }],
  settings: [{ name: 'Knob bundles and settings', extensions: withoutDots(FILE_KIND_EXTENSIONS.bundle) }],
};

/** What the open-file channel answers: the chosen path (null when cancelled), or a typed error. */
export type FileDialogResult = { path: string | null } | { error: KnobErrorPayload };

export const IPC_REQUEST_CHANNEL = 'knob:request';
export const IPC_EVENT_CHANNEL = 'knob:event';
export const IPC_CANCEL_CHANNEL = 'knob:cancel';
/** Carries the MessagePort of the frame path from the preload to the main process, once. */
export const IPC_FRAME_PORT_CHANNEL = 'knob:frame-port';
export const IPC_OPEN_FILE_CHANNEL = 'knob:open-file';
/** Main to page: shell commands. */
export const IPC_SHELL_CHANNEL = 'knob:shell';
/** Page to main: the page listens for shell commands now (those queued before are sent then). */
export const IPC_SHELL_READY_CHANNEL = 'knob:shell-ready';
