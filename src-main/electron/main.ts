import { app, BrowserWindow, dialog, ipcMain, session } from 'electron';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import {
  IPC_CANCEL_CHANNEL,
  IPC_EVENT_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  type FileDialogPurpose,
} from '../../src-shared/api/bridge';
import { toErrorPayload } from '../../src-shared/errors';
import { ApiConnection } from '../core/api/api-connection';
import { KnobBackend } from '../core/backend/knob-backend';
import { openLogFile } from '../core/logging/logger';
import { RecentRunsStore } from '../core/recent-runs/recent-runs-store';
import { isTrustedFrame, restrictPermissions } from './security';

/**
 * The thin Electron shell: one window, the preload bridge, IPC wired to the same backend and
 * dispatcher the WebSocket host uses. No application logic lives here.
 */
const devServerUrl = process.env.ELECTRON_RENDERER_URL;
let backend: KnobBackend | null = null;
/** One API connection per window's contents: its calls in flight, cancelled when it goes away. */
const connections = new Map<number, ApiConnection>();

function connectionFor(backend: KnobBackend, contents: Electron.WebContents): ApiConnection {
  let connection = connections.get(contents.id);
  if (connection === undefined) {
    const created = new ApiConnection(backend);
    connections.set(contents.id, created);
    contents.once('destroyed', () => {
      created.close();
      connections.delete(contents.id);
    });
    connection = created;
  }
  return connection;
}

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1480,
    height: 920,
    minWidth: 1024,
    minHeight: 700,
    backgroundColor: '#101318',
    show: false,
    title: 'Knob Studio',
    webPreferences: {
      preload: fileURLToPath(new URL('../preload/index.cjs', import.meta.url)),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());
  // No new windows and no navigation away from the app (checklist items 13-14).
  window.webContents.setWindowOpenHandler(() => ({ action: 'deny' }));
  window.webContents.on('will-navigate', (event) => event.preventDefault());
  if (devServerUrl !== undefined) void window.loadURL(devServerUrl);
  else void window.loadFile(fileURLToPath(new URL('../renderer/index.html', import.meta.url)));
}

app.enableSandbox();

void app.whenReady().then(async () => {
  const log = await openLogFile({ directory: app.getPath('logs') });
  const recentRuns = await RecentRunsStore.open(join(app.getPath('userData'), 'recent-runs'), { logger: log.logger });
  const ready = new KnobBackend({ log, recentRuns });
  backend = ready;
  restrictPermissions(session.defaultSession);
  ipcMain.handle(IPC_REQUEST_CHANNEL, async (event, message: unknown) => {
    if (!isTrustedFrame(event.senderFrame, devServerUrl)) {
      return { id: null, ok: false, error: { code: 'UNAUTHORIZED', message: 'request from an untrusted frame' } };
    }
    return connectionFor(ready, event.sender).receive(message);
  });
  ipcMain.on(IPC_CANCEL_CHANNEL, (event, message: unknown) => {
    if (isTrustedFrame(event.senderFrame, devServerUrl)) void connectionFor(ready, event.sender).receive(message);
  });
  const filters: Record<FileDialogPurpose, Electron.FileFilter[]> = {
    model: [{ name: 'ONNX models', extensions: ['onnx'] }],
    dataset: [{ name: 'Datasets', extensions: ['gz', 'idx', 'npz', 'npy', 'csv'] }],
    video: [{ name: 'Videos', extensions: ['mp4', 'm4v', 'mkv', 'webm', 'avi', 'mov', 'y4m', 'mpg', 'mpeg', 'ogv'] }],
    trace: [{ name: 'Knob traces (Arrow)', extensions: ['arrow', 'feather'] }],
    settings: [{ name: 'Knob settings', extensions: ['json'] }],
  };
  ipcMain.handle(IPC_OPEN_FILE_CHANNEL, async (event, purpose: unknown) => {
    if (!isTrustedFrame(event.senderFrame, devServerUrl) || typeof purpose !== 'string' || !(purpose in filters))
      return null;
    const window = BrowserWindow.fromWebContents(event.sender);
    const options: Electron.OpenDialogOptions = {
      properties: ['openFile'],
      filters: filters[purpose as FileDialogPurpose],
    };
    const result = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options);
    return result.canceled ? null : (result.filePaths[0] ?? null);
  });
  ipcMain.on(IPC_FRAME_PORT_CHANNEL, (event) => {
    const [port] = event.ports;
    if (port === undefined || !isTrustedFrame(event.senderFrame, devServerUrl)) return;
    port.on('message', ({ data }: { data: unknown }) => {
      try {
        if (!(data instanceof Uint8Array)) throw new TypeError('a frame packet must be a Uint8Array');
        ready.pushFrame(data);
      } catch (error) {
        event.sender.send(IPC_EVENT_CHANNEL, { event: 'frame.rejected', data: toErrorPayload(error) });
      }
    });
    port.start();
  });
  ready.subscribe((event, data) => {
    for (const window of BrowserWindow.getAllWindows()) window.webContents.send(IPC_EVENT_CHANNEL, { event, data });
  });
  createWindow();
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

// The inference process must not outlive the app.
app.on('will-quit', () => {
  void backend?.close();
});
