import type { EventEnvelope, RequestEnvelope, ResponseEnvelope } from './envelope';

/**
 * What the Electron preload exposes to the renderer as `window.knobBridge` (contextBridge):
 * one request channel and one event channel, nothing else of Electron or Node.
 */
export interface KnobBridge {
  request(message: RequestEnvelope): Promise<ResponseEnvelope>;
  onEvent(listener: (message: EventEnvelope) => void): () => void;
  /** The binary frame path: one encoded frame packet (frame-packet.ts) over a MessagePort. */
  sendFrame(packet: Uint8Array): void;
  /** The native open-file dialog; resolves to the chosen path, or null when cancelled. */
  openFileDialog(purpose: FileDialogPurpose): Promise<string | null>;
  /** The path of a file dropped on the window (Electron's webUtils; pages never see paths otherwise). */
  pathForFile(file: DroppedFile): string;
}

/** A DOM File as src-shared may name it (no DOM types here): what a drop event carries. */
export interface DroppedFile {
  readonly name: string;
  readonly size: number;
}

export type FileDialogPurpose = 'model' | 'dataset' | 'video' | 'trace' | 'settings';

export const IPC_REQUEST_CHANNEL = 'knob:request';
export const IPC_EVENT_CHANNEL = 'knob:event';
/** Carries the MessagePort of the frame path from the preload to the main process, once. */
export const IPC_FRAME_PORT_CHANNEL = 'knob:frame-port';
export const IPC_OPEN_FILE_CHANNEL = 'knob:open-file';
