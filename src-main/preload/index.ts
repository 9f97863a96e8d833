import { contextBridge, ipcRenderer, webUtils, type IpcRendererEvent } from 'electron';
import {
  IPC_CANCEL_CHANNEL,
  IPC_EVENT_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  type KnobBridge,
} from '../../src-shared/api/bridge';
import type { EventEnvelope } from '../../src-shared/api/envelope';

/**
 * The only surface the sandboxed renderer gets (KnobBridge): requests, their cancellation, events,
 * the frame path, the open dialog and dropped files' paths. No ipcRenderer, no Node, no Electron
 * objects cross the bridge (Electron security checklist, items 2-4 and 20).
 */
// Frames travel on their own MessagePort so a camera stream never queues behind requests; the
// buffer is transferred, not copied.
const frames = new MessageChannel();
ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, [frames.port1]);

const bridge: KnobBridge = {
  openFileDialog: (purpose) => ipcRenderer.invoke(IPC_OPEN_FILE_CHANNEL, purpose),
  pathForFile: (file) => webUtils.getPathForFile(file as File),
  sendFrame: (packet) => {
    const copy = packet.slice();
    frames.port2.postMessage(copy, [copy.buffer]);
  },
  request: (message) => ipcRenderer.invoke(IPC_REQUEST_CHANNEL, message),
  cancel: (message) => ipcRenderer.send(IPC_CANCEL_CHANNEL, message),
  onEvent: (listener) => {
    const wrapped = (_event: IpcRendererEvent, message: EventEnvelope): void => listener(message);
    ipcRenderer.on(IPC_EVENT_CHANNEL, wrapped);
    return () => {
      ipcRenderer.removeListener(IPC_EVENT_CHANNEL, wrapped);
    };
  },
};

contextBridge.exposeInMainWorld('knobBridge', bridge);
