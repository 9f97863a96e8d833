import { app, BrowserWindow, protocol, session } from 'electron';
import { join } from 'node:path';
import { KnobBackend } from '../core/backend/knob-backend';
import { openLogFile } from '../core/logging/logger';
import { RecentRunsStore } from '../core/recent-runs/recent-runs-store';
import { registerAppScheme, serveAppProtocol } from './app-protocol';
import { shellPaths } from './build-paths';
import { IpcBridge } from './ipc-bridge';
import { guardNavigation, restrictPermissions, trustedOrigin } from './security';
import { utilityLauncher } from './utility-inference';

/**
 * The thin Electron shell: one window on the app's own origin, the preload bridge, IPC wired to the
 * same backend and dispatcher the WebSocket host uses, inference in a utility process. No
 * application logic lives here.
 */
const { preload: PRELOAD, rendererDir: RENDERER_DIR } = shellPaths(import.meta.url);
const trust = trustedOrigin(app.isPackaged, process.env.ELECTRON_RENDERER_URL);
let backend: KnobBackend | null = null;
let bridge: IpcBridge | null = null;

function createWindow(): BrowserWindow {
  const window = new BrowserWindow({
    width: 1480,
    height: 920,
    minWidth: 1024,
    minHeight: 700,
    backgroundColor: '#101318',
    show: false,
    title: 'Knob Studio',
    webPreferences: {
      preload: PRELOAD,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());
  guardNavigation(window.webContents, trust);
  void window.loadURL(trust.url);
  return window;
}

// Privileged schemes are registered before the app is ready (Electron's rule).
registerAppScheme(protocol);
app.enableSandbox();

void app.whenReady().then(async () => {
  const log = await openLogFile({ directory: app.getPath('logs') });
  const recentRuns = await RecentRunsStore.open(join(app.getPath('userData'), 'recent-runs'), { logger: log.logger });
  const ready = new KnobBackend({ log, recentRuns, inferenceLauncher: utilityLauncher });
  backend = ready;
  serveAppProtocol(protocol, RENDERER_DIR);
  restrictPermissions(session.defaultSession, trust);
  bridge = new IpcBridge(ready, trust);
  bridge.register();
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
  bridge?.close();
  void backend?.close();
});
