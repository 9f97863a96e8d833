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
 * - utilityProcess.fork starts a real Node child in which process.parentPort exists
 *   (parent-port-shim.mjs), so the inference process runs its utility-process side.
 * State lives on globalThis: a test that re-imports the preload (a page reload) shares it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MessagePort as NodeMessagePort } from 'node:worker_threads';

export interface FakeFrame {
  url: string;
  parent: FakeFrame | null;
  origin: string;
}

type Handler = (event: unknown, ...args: unknown[]) => unknown;
type Listener = (event: unknown, ...args: unknown[]) => void;

interface RendererContext {
  contents: FakeWebContents;
  frame: FakeFrame;
  listeners: Array<{ channel: string; listener: Listener }>;
}

interface FakeState {
  handlers: Map<string, Handler>;
  mainListeners: Map<string, Listener[]>;
  exposed: Map<string, unknown>;
  windows: FakeBrowserWindow[];
  nextContentsId: number;
  renderer: RendererContext | null;
  renderers: RendererContext[];
  protocolHandlers: Map<string, (request: Request) => Promise<Response> | Response>;
  privilegedSchemes: unknown[];
  applicationMenu: unknown;
  dialogCalls: Array<{ kind: string; options: unknown }>;
  dialogAnswers: unknown[];
  openedPaths: string[];
  paths: Map<string, string>;
  singleInstance: boolean;
  quitCalls: number;
  exitCode: number | null;
  ready: { promise: Promise<void>; resolve: () => void };
  readyResolved: boolean;
  sandboxEnabled: boolean;
  /** The work areas of the attached displays (screen.getAllDisplays). */
  displays: Array<{ x: number; y: number; width: number; height: number }>;
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const STATE_KEY = Symbol.for('knob.fake-electron');
const globalState = globalThis as unknown as Record<symbol, FakeState | undefined>;
const state: FakeState = (globalState[STATE_KEY] ??= {
  handlers: new Map(),
  mainListeners: new Map(),
  exposed: new Map(),
  windows: [],
  nextContentsId: 1,
  renderer: null,
  renderers: [],
  protocolHandlers: new Map(),
  privilegedSchemes: [],
  applicationMenu: null,
  dialogCalls: [],
  dialogAnswers: [],
  openedPaths: [],
  paths: new Map(),
  singleInstance: true,
  quitCalls: 0,
  exitCode: null,
  ready: deferred(),
  readyResolved: false,
  sandboxEnabled: false,
  displays: [{ x: 0, y: 0, width: 1920, height: 1080 }],
});

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
  readonly mainFrame: FakeFrame = { url: 'about:blank', parent: null, origin: 'null' };
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  loadedUrls: string[] = [];
  private destroyed = false;
  reloads = 0;
  devToolsOpened = false;

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
  readonly webContents = new FakeWebContents();
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

/** Electron's MessagePortMain over a real (Node) MessagePort: 'message' events carry { data, ports }. */
export class FakeMessagePortMain extends EventEmitter {
  constructor(readonly port: NodeMessagePort | MessagePort) {
    super();
    const node = port as NodeMessagePort;
    node.on('message', (data: unknown) => this.emit('message', { data, ports: [] }));
    node.on('close', () => this.emit('close'));
  }
  postMessage(message: unknown, transfer?: unknown[]): void {
    (this.port as NodeMessagePort).postMessage(message, transfer as never);
  }
  start(): void {
    (this.port as NodeMessagePort).start();
  }
  close(): void {
    (this.port as NodeMessagePort).close();
  }
}

export class MessageChannelMain {
  readonly port1: FakeMessagePortMain;
  readonly port2: FakeMessagePortMain;
  constructor() {
    const channel = new MessageChannel();
    this.port1 = new FakeMessagePortMain(channel.port1);
    this.port2 = new FakeMessagePortMain(channel.port2);
  }
}

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
export const session = { defaultSession: new FakeSession() };

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

// ---- utilityProcess ----------------------------------------------------------------------------

const PARENT_PORT_SHIM = join(dirname(fileURLToPath(import.meta.url)), 'parent-port-shim.mjs');

class FakeUtilityProcess extends EventEmitter {
  private readonly child: ChildProcess;
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  private exited = false;

  constructor(
    modulePath: string,
    args: string[],
    options: { execArgv?: string[]; stdio?: unknown; env?: NodeJS.ProcessEnv },
  ) {
    super();
    const pipe = (at: number) =>
      Array.isArray(options.stdio) ? options.stdio[at] === 'pipe' : options.stdio === 'pipe';
    this.child = fork(modulePath, args, {
      execArgv: [...(options.execArgv ?? []), '--import', PARENT_PORT_SHIM],
      serialization: 'advanced',
      stdio: ['ignore', pipe(1) ? 'pipe' : 'ignore', pipe(2) ? 'pipe' : 'ignore', 'ipc'],
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    this.stdout = this.child.stdout;
    this.stderr = this.child.stderr;
    this.child.on('spawn', () => this.emit('spawn'));
    this.child.on('message', (message) => this.emit('message', message));
    this.child.on('exit', (code) => {
      this.exited = true;
      this.emit('exit', code ?? 1);
    });
  }
  get pid(): number | undefined {
    return this.exited ? undefined : this.child.pid;
  }
  postMessage(message: unknown): void {
    this.child.send(message as never);
  }
  kill(): boolean {
    return this.child.kill();
  }
}

export const utilityProcess = {
  forks: [] as Array<{ modulePath: string; options: unknown }>,
  children: [] as FakeUtilityProcess[],
  fork(modulePath: string, args: string[] = [], options: Record<string, unknown> = {}) {
    utilityProcess.forks.push({ modulePath, options });
    const child = new FakeUtilityProcess(modulePath, args, options);
    utilityProcess.children.push(child);
    return child;
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
