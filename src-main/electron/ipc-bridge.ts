import {
  BrowserWindow,
  ipcMain,
  type IpcMainEvent,
  type IpcMainInvokeEvent,
  type MessagePortMain,
  type WebContents,
} from 'electron';
import {
  IPC_CANCEL_CHANNEL,
  IPC_EVENT_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  isFileDialogPurpose,
  type FileDialogResult,
} from '../../src-shared/api/bridge';
import type { ResponseEnvelope } from '../../src-shared/api/envelope';
import { KnobError, toErrorPayload } from '../../src-shared/errors';
import { ApiConnection } from '../core/backend/api-connection';
import type { KnobBackend } from '../core/backend/knob-backend';
import { chooseFileToOpen } from './file-dialogs';
import { isTrustedFrame, type TrustedOrigin } from './security';

/**
 * The main side of the preload's bridge: every IPC channel, each answering only the app's top frame
 * (security.ts) and each turning a malformed or oversized payload into a typed error rather than a
 * throw or a silent drop:
 * - request and cancel (invoke): through one ApiConnection per window's contents, as a WebSocket
 *   client of browser mode goes (the same size cap, api-connection.ts);
 * - open-file (invoke): the native open dialog for a known purpose;
 * - frame-port (postMessage with a MessagePort): the binary frame path; one port per contents (a
 *   reload's new port replaces and closes the old one), non-binary or malformed packets answered
 *   with a frame.rejected event;
 * - events go out on the event channel to every window.
 */
export class IpcBridge {
  /** One API connection per window's contents: its calls in flight, cancelled when it goes away. */
  private readonly connections = new Map<number, ApiConnection>();
  private readonly framePorts = new Map<number, MessagePortMain>();
  private readonly tracked = new Set<number>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly backend: KnobBackend,
    private readonly trust: TrustedOrigin,
  ) {}

  register(): void {
    ipcMain.handle(IPC_REQUEST_CHANNEL, (event, message: unknown) => this.request(event, message));
    ipcMain.handle(IPC_CANCEL_CHANNEL, (event, message: unknown) => this.request(event, message));
    ipcMain.handle(IPC_OPEN_FILE_CHANNEL, (event, purpose: unknown) => this.openFile(event, purpose));
    ipcMain.on(IPC_FRAME_PORT_CHANNEL, (event) => this.framePort(event));
    this.unsubscribe = this.backend.subscribe((name, data) => {
      for (const window of BrowserWindow.getAllWindows())
        if (!window.webContents.isDestroyed()) window.webContents.send(IPC_EVENT_CHANNEL, { event: name, data });
    });
  }

  /** Stops listening (the app is quitting); each connection's calls are cancelled. */
  close(): void {
    for (const channel of [IPC_REQUEST_CHANNEL, IPC_CANCEL_CHANNEL, IPC_OPEN_FILE_CHANNEL])
      ipcMain.removeHandler(channel);
    ipcMain.removeAllListeners(IPC_FRAME_PORT_CHANNEL);
    this.unsubscribe?.();
    for (const connection of this.connections.values()) connection.close();
    for (const port of this.framePorts.values()) port.close();
    this.connections.clear();
    this.framePorts.clear();
  }

  private async request(event: IpcMainInvokeEvent, message: unknown): Promise<ResponseEnvelope | null> {
    if (!isTrustedFrame(event.senderFrame, this.trust)) return untrusted();
    return this.connectionFor(event.sender).receive(message);
  }

  private async openFile(event: IpcMainInvokeEvent, purpose: unknown): Promise<FileDialogResult> {
    if (!isTrustedFrame(event.senderFrame, this.trust)) return { error: untrusted().error };
    if (!isFileDialogPurpose(purpose))
      return {
        error: toErrorPayload(
          new KnobError(
            'BAD_REQUEST',
            `unknown file dialog purpose ${typeof purpose === 'string' ? JSON.stringify(purpose.slice(0, 64)) : `(a ${typeof purpose})`}`,
          ),
        ),
      };
    return { path: await chooseFileToOpen(BrowserWindow.fromWebContents(event.sender), [purpose]) };
  }

  private framePort(event: IpcMainEvent): void {
    const reject = (error: unknown) => {
      if (!event.sender.isDestroyed())
        event.sender.send(IPC_EVENT_CHANNEL, { event: 'frame.rejected', data: toErrorPayload(error) });
    };
    const [port] = event.ports;
    if (!isTrustedFrame(event.senderFrame, this.trust)) {
      port?.close();
      return reject(new KnobError('UNAUTHORIZED', 'frame port from an untrusted frame'));
    }
    if (port === undefined || event.ports.length !== 1)
      return reject(new KnobError('BAD_REQUEST', `the frame port message carries ${event.ports.length} ports, not 1`));
    this.track(event.sender);
    const id = event.sender.id;
    this.framePorts.get(id)?.close();
    this.framePorts.set(id, port);
    port.on('message', ({ data }: { data: unknown }) => {
      try {
        if (!(data instanceof Uint8Array)) throw new KnobError('BAD_REQUEST', 'a frame packet must be a Uint8Array');
        this.backend.pushFrame(data);
      } catch (error) {
        reject(error);
      }
    });
    port.start();
  }

  private connectionFor(contents: WebContents): ApiConnection {
    this.track(contents);
    let connection = this.connections.get(contents.id);
    if (connection === undefined) {
      connection = new ApiConnection(this.backend);
      this.connections.set(contents.id, connection);
    }
    return connection;
  }

  /**
   * Ends a page's connection and frame port when the page goes: a reload, a crashed renderer or
   * closed contents. Its calls in flight are cancelled, and the next page starts afresh (its
   * request ids start again at 1).
   */
  private track(contents: WebContents): void {
    if (this.tracked.has(contents.id)) return;
    this.tracked.add(contents.id);
    const id = contents.id;
    const end = () => {
      this.connections.get(id)?.close();
      this.connections.delete(id);
      this.framePorts.get(id)?.close();
      this.framePorts.delete(id);
    };
    contents.on('did-start-loading', end);
    contents.on('render-process-gone', end);
    contents.once('destroyed', () => {
      end();
      this.tracked.delete(id);
    });
  }
}

function untrusted(): ResponseEnvelope & { ok: false } {
  return {
    id: null,
    ok: false,
    error: toErrorPayload(new KnobError('UNAUTHORIZED', 'request from an untrusted frame')),
  };
}
