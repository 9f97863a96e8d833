import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import {
  IPC_CANCEL_CHANNEL,
  IPC_EVENT_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  IPC_SHELL_CHANNEL,
  IPC_SHELL_READY_CHANNEL,
  type FileDialogResult,
  type KnobBridge,
  type ShellCommand,
} from '../../src-shared/api/bridge';
import type { EventEnvelope } from '../../src-shared/api/envelope';
import { KnobError } from '../../src-shared/errors';

/**
 * The only surface the sandboxed renderer gets (KnobBridge): requests, their cancellation, events,
 * the frame path, the open dialog, dropped files' paths and the shell's commands. No ipcRenderer, no Node, no Electron
 * objects cross the bridge (Electron security checklist, items 2-4 and 20).
 */
// Frames travel on their own MessagePort so a camera stream never queues behind requests. The packet
// is cloned, not transferred: an ArrayBuffer in the transfer list of a message to a MessagePortMain
// loses the message (electron/electron#34905). The main process keeps one port per page: this
// load's replaces (and closes) the port of the page before a reload.
const frames = new MessageChannel();
ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, [frames.port1]);

const bridge: KnobBridge = {
  openFileDialog: async (purpose) => {
    const result = (await ipcRenderer.invoke(IPC_OPEN_FILE_CHANNEL, purpose)) as FileDialogResult;
    if ('error' in result) throw KnobError.fromPayload(result.error);
    return result.path;
  },
  pathForFile: (file) => webUtils.getPathForFile(file as File),
  sendFrame: (packet) => frames.port2.postMessage(packet),
  request: (message) => ipcRenderer.invoke(IPC_REQUEST_CHANNEL, message),
  // a cancel is answered only when it is malformed; nothing waits for that answer here
  cancel: (message) => void ipcRenderer.invoke(IPC_CANCEL_CHANNEL, message).catch(() => undefined),
  onEvent: (listener) => {
    const wrapped = (_event: IpcRendererEvent, message: EventEnvelope): void => listener(message);
    ipcRenderer.on(IPC_EVENT_CHANNEL, wrapped);
    return () => {
      ipcRenderer.removeListener(IPC_EVENT_CHANNEL, wrapped);
    };
  },
  onShellCommand: (listener) => {
    const wrapped = (_event: IpcRendererEvent, command: ShellCommand): void => listener(command);
    ipcRenderer.on(IPC_SHELL_CHANNEL, wrapped);
    ipcRenderer.send(IPC_SHELL_READY_CHANNEL);
    return () => {
      ipcRenderer.removeListener(IPC_SHELL_CHANNEL, wrapped);
    };
  },
};

contextBridge.exposeInMainWorld('knobBridge', bridge);
