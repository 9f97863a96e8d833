import { app, BrowserWindow, dialog, Menu, protocol, screen, session, shell } from 'electron';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FileDialogPurpose, ShellCommand } from '../../src-shared/api/bridge';
import type { RecentRuns } from '../../src-shared/api/recent-runs';
import { APP_NAME, APP_VERSION } from '../core/app-version';
import { KnobBackend } from '../core/backend/knob-backend';
import { openLogFile, type BackendLog } from '../core/logging/logger';
import { RecentRunsStore } from '../core/recent-runs/recent-runs-store';
import { aboutText, appMenuTemplate } from './app-menu';
import { registerAppScheme, serveAppProtocol } from './app-protocol';
import { shellPaths } from './build-paths';
import { chooseFileToOpen } from './file-dialogs';
import { filesToOpen } from './files-to-open';
import { IpcBridge } from './ipc-bridge';
import { guardEverything, restrictPermissions, trustedOrigin } from './security';
import { ShellCommands } from './shell-commands';
import { utilityLauncher } from './utility-inference';
import { readWindowState, usableWindowState, writeWindowState, type WindowState } from './window-state';

/**
 * The thin Electron shell: one window on the app's own origin, the preload bridge, IPC wired to the
 * same backend and dispatcher the WebSocket host uses, inference in a utility process, and what a
 * desktop user expects of an app (one instance, menus, native dialogs, files opened with it, its
 * window where it was, a crashed page reloaded). No application logic lives here: every command
 * goes to the page, which does it as the operator would in the desk.
 */
const { preload: PRELOAD, rendererDir: RENDERER_DIR } = shellPaths(import.meta.url);
const MINIMUM_SIZE = { width: 1024, height: 700 };
const QUIT_WAIT_MS = 10_000;
const trust = trustedOrigin(app.isPackaged, process.env.ELECTRON_RENDERER_URL);
const shellCommands = new ShellCommands(trust);
let backend: KnobBackend | null = null;
let bridge: IpcBridge | null = null;
let log: BackendLog | null = null;
let mainWindow: BrowserWindow | null = null;
/** Writes the shell started (the window's place) that quitting waits for. */
const pendingWrites = new Set<Promise<void>>();
/** Set once start-up is done; files opened before it wait in `pendingFiles`. */
let started = false;
const pendingFiles: Array<{ args: string[]; workingDirectory: string }> = [];

function createWindow(saved: WindowState | null): BrowserWindow {
  const window = new BrowserWindow({
    ...(saved?.bounds ?? { width: 1480, height: 920 }),
    minWidth: MINIMUM_SIZE.width,
    minHeight: MINIMUM_SIZE.height,
    backgroundColor: '#101318',
    show: false,
    title: APP_NAME,
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
  if (saved?.maximized) window.maximize();
  window.once('ready-to-show', () => window.show());
  shellCommands.track(window.webContents);
  recoverFromCrashes(window);
  window.on('close', () => saveWindowState(window));
  window.on('closed', () => {
    if (mainWindow === window) mainWindow = null;
  });
  void window.loadURL(trust.url);
  return window;
}

/** Writes the window's place (quitting waits for the write). */
function saveWindowState(window: BrowserWindow): void {
  if (window.isDestroyed()) return;
  const state = { bounds: window.getNormalBounds(), maximized: window.isMaximized() };
  const write = writeWindowState(app.getPath('userData'), state).catch((error: unknown) =>
    log?.logger.warn({ err: error }, 'the window state could not be saved'),
  );
  pendingWrites.add(write);
  void write.finally(() => pendingWrites.delete(write));
}

/**
 * A page that crashed or was killed is reloaded and told so; nothing the backend holds is lost. A
 * page that keeps crashing (MAX_CRASHES within CRASH_WINDOW_MS) is not reloaded again: the operator
 * is told, and the log has each crash.
 */
const MAX_CRASHES = 3;
const CRASH_WINDOW_MS = 60_000;
function recoverFromCrashes(window: BrowserWindow): void {
  const crashes: number[] = [];
  window.webContents.on('render-process-gone', (_event, details) => {
    log?.logger.error({ reason: details.reason, exitCode: details.exitCode }, 'the window stopped');
    if (details.reason === 'clean-exit' || window.isDestroyed()) return;
    const now = Date.now();
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - CRASH_WINDOW_MS) crashes.shift();
    if (crashes.length > MAX_CRASHES) {
      dialog.showErrorBox(
        `${APP_NAME} stopped`,
        `The window crashed ${crashes.length} times in a minute (last: ${details.reason}); it is not reloaded again. The log folder (Help menu) has the details. Your recordings are kept in the recent runs.`,
      );
      return;
    }
    shellCommands.send(window, {
      command: 'notice',
      message: `The window stopped (${details.reason}) and was reloaded; the session and its recordings are kept.`,
    });
    setTimeout(() => {
      if (!window.isDestroyed()) window.webContents.reload();
    }, 250);
  });
  window.webContents.on('unresponsive', () => log?.logger.warn('the window is not responding'));
}

/**
 * The window (created again if it was closed, as on macOS), shown and in front. Calls that overlap
 * while it is being created (open-file and activate together, a second launch during start-up)
 * share the one creation.
 */
let windowCreation: Promise<BrowserWindow> | null = null;
async function showWindow(): Promise<BrowserWindow> {
  if (mainWindow === null) {
    windowCreation ??= savedWindowState().then((saved) => (mainWindow = createWindow(saved)));
    await windowCreation;
    windowCreation = null;
  }
  const window = mainWindow!;
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
  return window;
}

async function savedWindowState(): Promise<WindowState | null> {
  const displays = screen.getAllDisplays().map((display) => display.workArea);
  return usableWindowState(await readWindowState(app.getPath('userData')), displays, MINIMUM_SIZE);
}

async function command(make: (window: BrowserWindow) => Promise<ShellCommand | null>): Promise<void> {
  const window = await showWindow();
  const chosen = await make(window);
  if (chosen !== null) shellCommands.send(window, chosen);
}

function openWithDialog(purposes: FileDialogPurpose[]): void {
  void command(async (window) => {
    const path = await chooseFileToOpen(window, purposes);
    return path === null ? null : { command: 'open', path };
  });
}

function exportWithDialog(): void {
  void command(async (window) => {
    const result = await dialog.showSaveDialog(window, {
      title: 'Export the tuned calibrator',
      defaultPath: 'tuned.knob.zip',
      filters: [{ name: 'Knob bundles', extensions: ['zip'] }],
    });
    return result.canceled || !result.filePath ? null : { command: 'export-bundle', path: result.filePath };
  });
}

function showAbout(): void {
  const ortVersion = (createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string }).version;
  void dialog.showMessageBox({
    type: 'info',
    title: `About ${APP_NAME}`,
    message: `${APP_NAME} ${APP_VERSION}`,
    detail: aboutText({
      Electron: process.versions.electron,
      Chromium: process.versions.chrome,
      Node: process.versions.node,
      V8: process.versions.v8,
      'onnxruntime-node': ortVersion,
    }),
  });
}

function setMenu(runs: RecentRuns['runs']): void {
  const template = appMenuTemplate({
    development: !app.isPackaged,
    isMac: process.platform === 'darwin',
    recentRuns: runs.map((run) => ({
      id: run.id,
      label: `${run.keptAt.slice(0, 16).replace('T', ' ')}  ${run.name !== '' ? run.name : run.description}`,
    })),
    actions: {
      open: openWithDialog,
      exportBundle: exportWithDialog,
      openRun: (id) => void command(async () => ({ command: 'open-run', id })),
      openLogFolder: () => void shell.openPath(app.getPath('logs')),
      showAbout,
    },
  });
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

/** Files given on a command line (this launch's, or a second launch's), opened in the window. */
function openFiles(args: string[], workingDirectory: string): void {
  if (!started) {
    pendingFiles.push({ args, workingDirectory });
    return;
  }
  const paths = filesToOpen(args, workingDirectory, existsSync, app.getAppPath());
  if (paths.length === 0) return;
  void showWindow().then((window) => {
    for (const path of paths) shellCommands.send(window, { command: 'open', path });
  });
}

async function start(): Promise<void> {
  log = await openLogFile({ directory: app.getPath('logs') });
  const recentRuns = await RecentRunsStore.open(join(app.getPath('userData'), 'recent-runs'), { logger: log.logger });
  const ready = new KnobBackend({ log, recentRuns, inferenceLauncher: utilityLauncher });
  backend = ready;
  serveAppProtocol(protocol, RENDERER_DIR);
  restrictPermissions(session.defaultSession, trust);
  bridge = new IpcBridge(ready, trust);
  bridge.register();
  shellCommands.register();
  setMenu((await ready.call('runs.list', {})).runs);
  ready.subscribe((event, data) => {
    if (event === 'runs.changed') setMenu((data as RecentRuns).runs);
  });
  app.on('child-process-gone', (_event, details) =>
    log?.logger.error({ type: details.type, reason: details.reason }, 'a child process stopped'),
  );
  await showWindow();
  started = true;
  openFiles(process.argv.slice(1), process.cwd());
  for (const { args, workingDirectory } of pendingFiles.splice(0)) openFiles(args, workingDirectory);
}

// One instance: a second launch hands its files to the first and quits.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // Privileged schemes are registered before the app is ready (Electron's rule).
  registerAppScheme(protocol);
  app.enableSandbox();
  // navigation and permission guards on every window and web contents, this one and any later
  guardEverything(app, trust);
  app.on('second-instance', (_event, argv, workingDirectory) => {
    if (started) void showWindow();
    openFiles(argv.slice(1), workingDirectory);
  });
  // macOS: a file opened with the app from the Finder or the Dock (possibly before it is ready)
  app.on('open-file', (event, path) => {
    event.preventDefault();
    openFiles([path], '/');
  });
  // A start-up that fails says why and ends the process: a windowless process would keep the
  // single-instance lock, and every later launch would hand its files to it and quit.
  void app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      log?.logger.fatal({ err: error }, 'start-up failed');
      dialog.showErrorBox(`${APP_NAME} could not start`, error instanceof Error ? error.message : String(error));
      app.exit(1);
    });
  app.on('activate', () => {
    if (started) void showWindow();
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  // Quitting waits for the backend to close (a recording playing at quit is kept as a recent run;
  // the inference process ends) and for the window's place to be written, at most QUIT_WAIT_MS.
  let closing = false;
  app.on('before-quit', (event) => {
    if (closing) return;
    closing = true;
    event.preventDefault();
    // app.exit closes the window without its 'close' event: its place is saved here
    if (mainWindow !== null) saveWindowState(mainWindow);
    const done = Promise.allSettled([backend?.close(), ...pendingWrites]);
    const waited = new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS));
    bridge?.close();
    void Promise.race([done, waited]).then(() => app.exit(0));
  });
}
