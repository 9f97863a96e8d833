/**
 * A fake 'electron' module (the vitest alias in vitest.config.ts), so that the real shell
 * (src-main/electron) and the real preload run here, where no Electron binary can be had. Only the
 * transport and the native parts are fake:
 * - ipcMain / ipcRenderer loop back in process, every argument and result through structuredClone
 *   (as Electron's IPC serialises them), each call carrying the sending renderer's webContents and
 *   frame, so the main side's checks see what they would see in Electron;
 * - ipcRenderer.postMessage transfers real MessagePorts (Node's), wrapped as MessagePortMain;
 * - contextBridge records what the preload exposes; BrowserWindow, webContents, session, protocol,
 *   dialog and Menu record their options and handlers for the tests to read and call;
 * - as in Electron, app emits 'web-contents-created' for every webContents as it is made (before
 *   anything loads in it) and 'session-created' for every session after the default one; a
 *   webContents has the session its window's webPreferences name (session or partition);
 * - utilityProcess.fork starts a real Node child in which process.parentPort exists
 *   (parent-port-shim.mjs), so the inference process runs its utility-process side.
 * State lives on globalThis: a test that re-imports the preload (a page reload) shares it.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeMessagePortMain } from './message-ports';

export { FakeMessagePortMain, MessageChannelMain } from './message-ports';
export { utilityProcess } from './utility-process';

import { state, type FakeFrame, type Handler, type Listener, type RendererContext } from './fake-state';

export type { FakeFrame } from './fake-state';

const clone = <T>(value: T): T => structuredClone(value);

// ---- app -------------------------------------------------------------------------------------

class FakeApp extends EventEmitter {
  isPackaged = false;
  readonly name = 'Knob Studio';
  enableSandbox(): void {
    state.sandboxEnabled = true;
  }
  whenReady(): Promise<void> {
    return state.ready.promise;
  }
  isReady(): boolean {
    return state.readyResolved;
  }
  getPath(name: string): string {
    let path = state.paths.get(name);
    if (path === undefined) {
      path = mkdtempSync(join(tmpdir(), `fake-electron-${name}-`));
      state.paths.set(name, path);
    }
    return path;
  }
  getAppPath(): string {
    return process.cwd();
  }
  getVersion(): string {
    return '0.0.0-fake';
  }
  getName(): string {
    return this.name;
  }
  requestSingleInstanceLock(): boolean {
    return state.singleInstance;
  }
  setAboutPanelOptions(): void {}
  /** As Electron's: 'before-quit' (which may prevent it), then 'will-quit'. */
  quit(): void {
    state.quitCalls++;
    let prevented = false;
    this.emit('before-quit', { preventDefault: () => (prevented = true) });
    if (!prevented) this.emit('will-quit', { preventDefault() {} });
  }
  /** Ends at once (no quit events), with this exit code. */
  exit(code = 0): void {
    state.exitCode = code;
  }
  focus(): void {}
}
export const app = new FakeApp();

// ---- webContents, frames, windows --------------------------------------------------------------

export class FakeWebContents extends EventEmitter {
  readonly id = state.nextContentsId++;
  readonly session: FakeSession;
  readonly mainFrame: FakeFrame = { url: 'about:blank', parent: null, origin: 'null' };
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  loadedUrls: string[] = [];
  private destroyed = false;
  reloads = 0;
  devToolsOpened = false;

  constructor(contentsSession: FakeSession = session.defaultSession) {
    super();
    this.session = contentsSession;
    app.emit('web-contents-created', { preventDefault() {} }, this);
  }

  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }): void {
    this.windowOpenHandler = handler;
  }
  async loadURL(url: string): Promise<void> {
    this.loadedUrls.push(url);
    this.mainFrame.url = url;
    try {
      this.mainFrame.origin = new URL(url).origin;
    } catch {
      this.mainFrame.origin = 'null';
    }
  }
  getURL(): string {
    return this.mainFrame.url;
  }
  reload(): void {
    this.reloads++;
    this.emit('did-start-loading');
  }
  openDevTools(): void {
    this.devToolsOpened = true;
  }
  send(channel: string, ...args: unknown[]): void {
    if (this.destroyed) throw new Error('Object has been destroyed');
    for (const renderer of state.renderers)
      if (renderer.contents === this)
        for (const { channel: c, listener } of renderer.listeners)
          if (c === channel) listener({ sender: null }, ...args.map(clone));
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('destroyed');
  }
  /** What a navigation/redirect event's handlers decide: true when one of them prevented it. */
  fireNavigation(name: string, url: string): boolean {
    let prevented = false;
    this.emit(name, { url, preventDefault: () => (prevented = true) }, url);
    return prevented;
  }
}

interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export class FakeBrowserWindow extends EventEmitter {
  readonly webContents: FakeWebContents;
  readonly options: Record<string, unknown>;
  shown = false;
  focused = 0;
  minimized = false;
  maximized = false;
  private bounds: Bounds;
  private destroyed = false;

  constructor(options: Record<string, unknown> = {}) {
    super();
    this.options = options;
    const preferences = (options.webPreferences ?? {}) as { session?: FakeSession; partition?: string };
    this.webContents = new FakeWebContents(
      preferences.session ??
        (preferences.partition === undefined ? session.defaultSession : session.fromPartition(preferences.partition)),
    );
    this.bounds = {
      x: (options.x as number | undefined) ?? 0,
      y: (options.y as number | undefined) ?? 0,
      width: (options.width as number | undefined) ?? 800,
      height: (options.height as number | undefined) ?? 600,
    };
    state.windows.push(this);
  }
  static getAllWindows(): FakeBrowserWindow[] {
    return state.windows.filter((w) => !w.destroyed);
  }
  static fromWebContents(contents: unknown): FakeBrowserWindow | null {
    return state.windows.find((w) => w.webContents === contents) ?? null;
  }
  static getFocusedWindow(): FakeBrowserWindow | null {
    return FakeBrowserWindow.getAllWindows()[0] ?? null;
  }
  loadURL(url: string): Promise<void> {
    return this.webContents.loadURL(url);
  }
  show(): void {
    this.shown = true;
  }
  focus(): void {
    this.focused++;
  }
  restore(): void {
    this.minimized = false;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isMaximized(): boolean {
    return this.maximized;
  }
  maximize(): void {
    this.maximized = true;
  }
  getBounds(): Bounds {
    return { ...this.bounds };
  }
  getNormalBounds(): Bounds {
    return { ...this.bounds };
  }
  setBounds(bounds: Partial<Bounds>): void {
    this.bounds = { ...this.bounds, ...bounds };
  }
  isDestroyed(): boolean {
    return this.destroyed;
  }
  close(): void {
    if (this.destroyed) return;
    this.emit('close', { preventDefault() {} });
    this.destroyed = true;
    this.webContents.destroy();
    this.emit('closed');
    if (FakeBrowserWindow.getAllWindows().length === 0) app.emit('window-all-closed');
  }
}
export const BrowserWindow = FakeBrowserWindow;

// ---- IPC ------------------------------------------------------------------------------------------

function currentRenderer(): RendererContext {
  if (state.renderer === null) throw new Error('fake electron: no renderer is running (load the preload first)');
  return state.renderer;
}

function mainEvent(renderer: RendererContext, extra: Record<string, unknown> = {}) {
  return {
    sender: renderer.contents,
    senderFrame: renderer.frame,
    frameId: 1,
    processId: 1,
    ...extra,
  };
}

export const ipcMain = {
  handle(channel: string, handler: Handler): void {
    if (state.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    state.handlers.set(channel, handler);
  },
  removeHandler(channel: string): void {
    state.handlers.delete(channel);
  },
  on(channel: string, listener: Listener): void {
    state.mainListeners.set(channel, [...(state.mainListeners.get(channel) ?? []), listener]);
  },
  removeAllListeners(channel?: string): void {
    if (channel === undefined) state.mainListeners.clear();
    else state.mainListeners.delete(channel);
  },
};

export const ipcRenderer = {
  async invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    const renderer = currentRenderer();
    const handler = state.handlers.get(channel);
    if (handler === undefined) throw new Error(`Error invoking remote method '${channel}': No handler registered`);
    try {
      return clone(await handler(mainEvent(renderer), ...args.map(clone)));
    } catch (error) {
      // Electron passes only the message across
      throw new Error(`Error invoking remote method '${channel}': ${String(error)}`);
    }
  },
  send(channel: string, ...args: unknown[]): void {
    const renderer = currentRenderer();
    for (const listener of state.mainListeners.get(channel) ?? [])
      listener(mainEvent(renderer, { ports: [] }), ...args.map(clone));
  },
  postMessage(channel: string, message: unknown, transfer: MessagePort[] = []): void {
    const renderer = currentRenderer();
    const ports = transfer.map((port) => new FakeMessagePortMain(port));
    for (const listener of state.mainListeners.get(channel) ?? [])
      listener(mainEvent(renderer, { ports }), clone(message));
  },
  on(channel: string, listener: Listener): void {
    currentRenderer().listeners.push({ channel, listener });
  },
  removeListener(channel: string, listener: Listener): void {
    for (const renderer of state.renderers)
      renderer.listeners = renderer.listeners.filter((l) => !(l.channel === channel && l.listener === listener));
  },
};

export const contextBridge = {
  exposeInMainWorld(key: string, api: unknown): void {
    state.exposed.set(key, api);
  },
};

export const webUtils = {
  getPathForFile(file: { path?: string }): string {
    return file.path ?? '';
  },
};

// ---- session, protocol, dialog, menu, shell ----------------------------------------------------

class FakeSession {
  permissionRequestHandler: ((...args: unknown[]) => void) | null = null;
  permissionCheckHandler: ((...args: unknown[]) => boolean) | null = null;
  devicePermissionHandler: ((...args: unknown[]) => boolean) | null = null;
  setPermissionRequestHandler(handler: (...args: unknown[]) => void): void {
    this.permissionRequestHandler = handler;
  }
  setPermissionCheckHandler(handler: (...args: unknown[]) => boolean): void {
    this.permissionCheckHandler = handler;
  }
  setDevicePermissionHandler(handler: (...args: unknown[]) => boolean): void {
    this.devicePermissionHandler = handler;
  }
}
const partitions = new Map<string, FakeSession>();
export const session = {
  defaultSession: new FakeSession(),
  /** One session per partition name, made (and announced) on first use. */
  fromPartition(partition: string): FakeSession {
    let made = partitions.get(partition);
    if (made === undefined) {
      made = new FakeSession();
      partitions.set(partition, made);
      app.emit('session-created', made);
    }
    return made;
  },
};

export const protocol = {
  registerSchemesAsPrivileged(schemes: unknown[]): void {
    state.privilegedSchemes.push(...schemes);
  },
  handle(scheme: string, handler: (request: Request) => Promise<Response> | Response): void {
    state.protocolHandlers.set(scheme, handler);
  },
};

export const dialog = {
  async showOpenDialog(...args: unknown[]) {
    state.dialogCalls.push({ kind: 'open', options: args[args.length - 1] });
    const answer = state.dialogAnswers.shift();
    return typeof answer === 'string' ? { canceled: false, filePaths: [answer] } : { canceled: true, filePaths: [] };
  },
  async showSaveDialog(...args: unknown[]) {
    state.dialogCalls.push({ kind: 'save', options: args[args.length - 1] });
    const answer = state.dialogAnswers.shift();
    return typeof answer === 'string' ? { canceled: false, filePath: answer } : { canceled: true, filePath: '' };
  },
  async showMessageBox(...args: unknown[]) {
    state.dialogCalls.push({ kind: 'message', options: args[args.length - 1] });
    const answer = state.dialogAnswers.shift();
    return { response: typeof answer === 'number' ? answer : 0, checkboxChecked: false };
  },
  showErrorBox(title: string, content: string): void {
    state.dialogCalls.push({ kind: 'error', options: { title, content } });
  },
};

export const Menu = {
  buildFromTemplate(template: unknown[]) {
    return { items: template };
  },
  setApplicationMenu(menu: unknown): void {
    state.applicationMenu = menu;
  },
};

export const screen = {
  getAllDisplays() {
    return state.displays.map((workArea) => ({ workArea, bounds: workArea }));
  },
};

export const shell = {
  async openPath(path: string): Promise<string> {
    state.openedPaths.push(path);
    return '';
  },
};

// ---- the tests' handle -------------------------------------------------------------------------

/** What the tests drive and read. */
export const fakeElectron = {
  state,
  /** Resolves app.whenReady(): the shell's start-up runs. */
  launch(): void {
    state.readyResolved = true;
    state.ready.resolve();
  },
  /** Waits until `probe` holds (the shell's start-up is asynchronous). */
  async until<T>(probe: () => T | null | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
    const started = Date.now();
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() - started > timeoutMs) throw new Error(`fake electron: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  },
  /**
   * Runs the real preload as the page of `window` at `frameUrl` (a page load: a reload runs it
   * again); returns what it exposed. `importPreload` imports the module afresh each time.
   */
  async loadPage<T>(
    window: FakeBrowserWindow,
    importPreload: () => Promise<unknown>,
    key = 'knobBridge',
  ): Promise<{ api: T; renderer: RendererContext }> {
    const renderer: RendererContext = {
      contents: window.webContents,
      frame: window.webContents.mainFrame,
      listeners: [],
    };
    state.renderers.push(renderer);
    state.renderer = renderer;
    state.exposed.delete(key);
    await importPreload();
    const api = state.exposed.get(key) as T | undefined;
    if (api === undefined) throw new Error(`fake electron: the preload exposed no '${key}'`);
    return { api, renderer };
  },
  /** Runs `action` as if sent from `frame` (a subframe, another origin) of the current page. */
  async asFrame<T>(frame: FakeFrame, action: () => Promise<T> | T): Promise<T> {
    const renderer = currentRenderer();
    const previous = renderer.frame;
    renderer.frame = frame;
    try {
      return await action();
    } finally {
      renderer.frame = previous;
    }
  },
  /** A request on the app protocol, answered by the handler the shell registered. */
  async fetch(url: string, init?: RequestInit): Promise<Response> {
    const scheme = new URL(url).protocol.slice(0, -1);
    const handler = state.protocolHandlers.get(scheme);
    if (handler === undefined) throw new Error(`fake electron: no handler for ${scheme}:`);
    return handler(new Request(url, init));
  },
};
