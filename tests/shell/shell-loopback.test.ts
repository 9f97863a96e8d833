/**
 * The real Electron shell (src-main/electron/main.ts and everything it wires) and the real preload,
 * run together against the fake 'electron' module (tests/support/fake-electron): only the IPC
 * transport and the native parts are fake. Every API method reaches the backend through the
 * preload's bridge and the main process's handlers; a frame that is not the app's top frame is
 * refused on every channel; malformed and oversized payloads get typed errors; the frame port
 * carries real camera frames into the engine (inference in a utility process) and refuses
 * non-binary messages; a reload's new frame port replaces the old one; the window's options,
 * navigation guards, permissions and the app protocol are as Electron's security checklist asks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { MessagePort as NodeMessagePort } from 'node:worker_threads';
import {
  IPC_CANCEL_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  KNOB_BRIDGE_FUNCTIONS,
  type KnobBridge,
  type ShellCommand,
} from '../../src-shared/api/bridge';
import { API_METHODS } from '../../src-shared/api/contract';
import type { EventEnvelope, ResponseEnvelope } from '../../src-shared/api/envelope';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { MAX_REQUEST_BYTES } from '../../src-shared/api/envelope';
import {
  app,
  fakeElectron,
  ipcRenderer,
  session,
  utilityProcess,
  type FakeBrowserWindow,
} from '../support/fake-electron';
import { fashionMnistSample } from '../support/fashion-mnist';
import { processAlive } from '../support/process-alive';
import { expectNavigationGuarded } from '../support/shell-guards';

let window: FakeBrowserWindow;
let inferencePid: number | undefined;
let bridge: KnobBridge;
const events: EventEnvelope[] = [];
let nextId = 1;

// each page load runs the preload module afresh (a distinct module id per load)
const PAGE_LOADS = [
  () => import('../../src-main/preload/index.ts?page=1'),
  () => import('../../src-main/preload/index.ts?page=2'),
];

async function call(method: string, params: unknown = {}): Promise<ResponseEnvelope> {
  return bridge.request({ id: nextId++, method, params } as never);
}

async function nextEvent(match: (event: EventEnvelope) => boolean, what: string): Promise<EventEnvelope> {
  return fakeElectron.until(() => events.find(match), what);
}

const MODEL_FILE = resolve('resources/models/knob-fmnist.onnx');
const shellCommands: ShellCommand[] = [];
const argv = process.argv;

beforeAll(async () => {
  // launched as `knob-studio <model file>`, with a window place saved by an earlier run
  process.argv = [process.execPath, '.', MODEL_FILE, '--some-chromium-switch'];
  writeFileSync(
    join(app.getPath('userData'), 'window-state.json'),
    JSON.stringify({ bounds: { x: 100, y: 80, width: 1300, height: 800 }, maximized: false }),
  );
  await import('../../src-main/electron/main');
  fakeElectron.launch();
  window = await fakeElectron.until(() => fakeElectron.state.windows[0], 'the main window');
  const page = await fakeElectron.loadPage<KnobBridge>(window, PAGE_LOADS[0]!);
  bridge = page.api;
  bridge.onEvent((event) => events.push(event));
});

afterAll(async () => {
  process.argv = argv;
  await call('stream.stop').catch(() => undefined);
  if (!window.isDestroyed()) window.close();
  app.emit('will-quit');
});

describe('start-up', () => {
  it('registers the app scheme as privileged before ready, and loads the page from it', () => {
    expect(fakeElectron.state.privilegedSchemes).toEqual([
      { scheme: 'knob', privileges: { standard: true, secure: true, supportFetchAPI: true } },
    ]);
    expect(window.webContents.loadedUrls).toEqual(['knob://app/index.html']);
    expect(fakeElectron.state.sandboxEnabled).toBe(true);
  });

  it('opens one window: context-isolated, sandboxed, no Node, no webview, the preload bundle', () => {
    expect(fakeElectron.state.windows).toHaveLength(1);
    expect(window.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
    expect((window.options.webPreferences as { preload: string }).preload).toMatch(/[/\\]preload[/\\]index\.cjs$/);
  });

  it('exposes exactly the bridge functions, all functions', () => {
    expect(Object.keys(bridge).sort()).toEqual([...KNOB_BRIDGE_FUNCTIONS].sort());
    for (const name of KNOB_BRIDGE_FUNCTIONS) expect(typeof bridge[name]).toBe('function');
  });
});

describe('requests through the preload and the main handlers', () => {
  it('every API method reaches the backend (answered by it, not by the transport)', async () => {
    for (const method of Object.keys(API_METHODS)) {
      const response = await call(method);
      if (!response.ok) {
        // the backend's own answers: bad params for this method, or a state it is not in
        expect(response.error.code, `${method}: ${response.error.message}`).not.toMatch(
          /^(UNKNOWN_METHOD|UNAUTHORIZED|REQUEST_TOO_LARGE|INTERNAL)$/,
        );
        expect(response.error.message, method).not.toMatch(/malformed request/);
      }
      expect(response.id).toBe(nextId - 1);
    }
    expect(((await call('app.info')) as { result: { name: string } }).result.name).toBe('Knob Studio');
  });

  it('an unknown method and a malformed envelope get typed errors', async () => {
    expect(await call('no.such.method')).toMatchObject({ ok: false, error: { code: 'UNKNOWN_METHOD' } });
    const malformed = await bridge.request({ nope: true } as never);
    expect(malformed).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
  });

  it('an oversized structured-clone request gets REQUEST_TOO_LARGE', async () => {
    const big = new Uint8Array(MAX_REQUEST_BYTES + 1);
    const response = await call('knobs.set', { gate: {}, padding: big });
    expect(response).toMatchObject({ ok: false, error: { code: 'REQUEST_TOO_LARGE' } });
  });

  it('a cancel that is malformed is answered with a typed error; a good one with nothing', async () => {
    expect(await ipcRenderer.invoke(IPC_CANCEL_CHANNEL, { cancel: { not: 'an id' } })).toMatchObject({
      ok: false,
      error: { code: 'BAD_REQUEST' },
    });
    expect(await ipcRenderer.invoke(IPC_CANCEL_CHANNEL, { cancel: 12345 })).toBeNull();
  });

  it('the open dialog: a known purpose opens it; toString, __proto__ and others are typed errors', async () => {
    fakeElectron.state.dialogAnswers.push('/data/model.onnx');
    expect(await bridge.openFileDialog('model')).toBe('/data/model.onnx');
    expect(fakeElectron.state.dialogCalls.at(-1)).toMatchObject({
      kind: 'open',
      options: { properties: ['openFile'], filters: [{ extensions: ['onnx'] }] },
    });
    for (const purpose of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 42, null, 10n, 'x'.repeat(1e6)]) {
      await expect(bridge.openFileDialog(purpose as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect(fakeElectron.state.dialogCalls).toHaveLength(1);
  });
});

describe('frames that are not the app top frame', () => {
  const subframe = () => ({ url: 'knob://app/index.html', parent: window.webContents.mainFrame, origin: 'null' });
  const foreign = { url: 'https://example.com/', parent: null, origin: 'https://example.com' };
  const localFile = { url: 'file:///home/user/evil.html', parent: null, origin: 'file://' };

  it('are refused on every invoke channel with UNAUTHORIZED', async () => {
    for (const frame of [subframe(), foreign, localFile]) {
      const request = await fakeElectron.asFrame(frame, () => call('app.info'));
      expect(request, frame.url).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
      const cancel = await fakeElectron.asFrame(frame, () => ipcRenderer.invoke(IPC_CANCEL_CHANNEL, { cancel: 1 }));
      expect(cancel).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
      const dialog = await fakeElectron.asFrame(frame, () => ipcRenderer.invoke(IPC_OPEN_FILE_CHANNEL, 'model'));
      expect(dialog).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
      expect(
        await fakeElectron.asFrame(frame, () =>
          ipcRenderer.invoke(IPC_REQUEST_CHANNEL, { id: 1, method: 'app.info', params: {} }),
        ),
      ).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }
    expect(fakeElectron.state.dialogCalls.filter((c) => c.kind === 'open')).toHaveLength(1);
  });
});

describe('the frame port', () => {
  it('carries camera frames into the engine (inference in a utility process) and refuses non-binary messages', async () => {
    const forks = utilityProcess.forks.length;
    expect(await call('model.load', { path: 'default', discard: true })).toMatchObject({ ok: true });
    expect(utilityProcess.forks.length).toBe(forks + 1);
    inferencePid = utilityProcess.children.at(-1)?.pid;
    expect(inferencePid).toBeGreaterThan(0);
    expect(await call('source.open', { kind: 'camera', frameRateHz: 30, discard: true })).toMatchObject({ ok: true });
    expect(await call('stream.start')).toMatchObject({ ok: true });
    const sample = fashionMnistSample(12);
    for (let i = 0; i < 12; i++) {
      bridge.sendFrame(
        encodeFramePacket({
          width: 28,
          height: 28,
          channels: 1,
          timestampSeconds: 50 + i / 30,
          label: sample.labels[i]!,
          pixels: sample.images[i]!,
        }),
      );
      await new Promise((r) => setTimeout(r, 30));
    }
    const update = await nextEvent(
      (e) => e.event === 'stream.update' && (e.data as { timestampSeconds: number }).timestampSeconds >= 50,
      'a stream update of a pushed frame',
    );
    expect(update.data).toMatchObject({ label: expect.any(Number) });
    // a malformed packet: a typed frame.rejected event
    bridge.sendFrame(Uint8Array.of(1, 2, 3));
    const rejected = await nextEvent((e) => e.event === 'frame.rejected', 'frame.rejected');
    expect(rejected.data).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/frame packet/) });
    await call('stream.stop');
  }, 60_000);

  it("refuses a non-binary message; a page's new port replaces and closes the old one", async () => {
    const first = new MessageChannel();
    ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, [first.port1]);
    const before = events.length;
    first.port2.postMessage('not a frame');
    const rejected = await nextEvent(
      (e) => events.indexOf(e) >= before && e.event === 'frame.rejected',
      'frame.rejected of a string',
    );
    expect(rejected.data).toMatchObject({ code: 'BAD_REQUEST', message: 'a frame packet must be a Uint8Array' });
    const closed = new Promise<void>((resolve) =>
      (first.port2 as unknown as NodeMessagePort).once('close', () => resolve()),
    );
    const second = new MessageChannel();
    ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, [second.port1]);
    await closed;
    second.port2.close();
  });

  it('refuses a port from an untrusted frame, and a message without exactly one port', async () => {
    const before = events.length;
    const foreign = new MessageChannel();
    const closed = new Promise<void>((resolve) =>
      (foreign.port2 as unknown as NodeMessagePort).once('close', () => resolve()),
    );
    await fakeElectron.asFrame({ url: 'https://example.com/', parent: null, origin: 'https://example.com' }, () =>
      ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, [foreign.port1]),
    );
    await closed;
    ipcRenderer.postMessage(IPC_FRAME_PORT_CHANNEL, null, []);
    const codes = events
      .slice(before)
      .filter((e) => e.event === 'frame.rejected')
      .map((e) => (e.data as { code: string }).code);
    expect(codes).toEqual(['UNAUTHORIZED', 'BAD_REQUEST']);
  });
});

describe('permissions', () => {
  const ELECTRON_PERMISSIONS = [
    'clipboard-read',
    'clipboard-sanitized-write',
    'display-capture',
    'fullscreen',
    'geolocation',
    'idle-detection',
    'media',
    'mediaKeySystem',
    'midi',
    'midiSysex',
    'notifications',
    'pointerLock',
    'keyboardLock',
    'openExternal',
    'speaker-selection',
    'storage-access',
    'top-level-storage-access',
    'window-management',
    'fileSystem',
    'unknown',
  ];
  const request = (permission: string, details: Record<string, unknown>) =>
    new Promise<boolean>((resolve) =>
      session.defaultSession.permissionRequestHandler!(window.webContents, permission, resolve, details),
    );
  const app = { requestingUrl: 'knob://app/index.html', isMainFrame: true };

  it('grants the camera only: video from the app top frame', async () => {
    expect(await request('media', { ...app, mediaTypes: ['video'] })).toBe(true);
    expect(await request('media', { ...app, mediaTypes: ['audio'] })).toBe(false);
    expect(await request('media', { ...app, mediaTypes: ['video', 'audio'] })).toBe(false);
    expect(await request('media', { ...app, mediaTypes: [] })).toBe(false);
    expect(await request('media', { ...app, isMainFrame: false, mediaTypes: ['video'] })).toBe(false);
    for (const requestingUrl of ['https://example.com/', 'file:///tmp/x.html', 'knob://other/index.html'])
      expect(await request('media', { requestingUrl, isMainFrame: true, mediaTypes: ['video'] }), requestingUrl).toBe(
        false,
      );
  });

  it('grants MIDI without system exclusive, to the app top frame only', async () => {
    expect(await request('midi', app)).toBe(true);
    expect(await request('midiSysex', app)).toBe(false);
    expect(await request('midi', { ...app, isMainFrame: false })).toBe(false);
    for (const requestingUrl of ['https://example.com/', 'file:///tmp/x.html', 'knob://other/index.html'])
      expect(await request('midi', { requestingUrl, isMainFrame: true }), requestingUrl).toBe(false);
    const midi = (origin: string, isMainFrame: boolean) =>
      session.defaultSession.permissionCheckHandler!(window.webContents, 'midi', origin, {
        requestingUrl: `${origin}/index.html`,
        isMainFrame,
      });
    expect(midi('knob://app', true)).toBe(true);
    expect(midi('knob://app', false)).toBe(false);
    expect(midi('https://example.com', true)).toBe(false);
  });

  it("refuses every other permission of Electron's list, to the app and to anyone", async () => {
    for (const permission of ELECTRON_PERMISSIONS.filter((p) => p !== 'media' && p !== 'midi')) {
      expect(await request(permission, app), permission).toBe(false);
      const check = session.defaultSession.permissionCheckHandler!(window.webContents, permission, 'knob://app', {
        ...app,
        mediaType: 'video',
      });
      expect(check, permission).toBe(false);
    }
    const camera = (origin: string, isMainFrame: boolean) =>
      session.defaultSession.permissionCheckHandler!(window.webContents, 'media', origin, {
        requestingUrl: `${origin}/index.html`,
        isMainFrame,
        mediaType: 'video',
      });
    expect(camera('knob://app', true)).toBe(true);
    expect(camera('knob://app', false)).toBe(false);
    expect(camera('https://example.com', true)).toBe(false);
    expect(session.defaultSession.devicePermissionHandler!({})).toBe(false);
  });
});

describe('navigation and new windows', () => {
  it('the page cannot navigate any frame, redirect away, open windows or attach webviews', () => {
    expectNavigationGuarded(window.webContents);
  });
});

describe('the app protocol', () => {
  it('serves the built page with its policy, as a header and in the page', async () => {
    const page = await fakeElectron.fetch('knob://app/index.html');
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toMatch(/connect-src 'self'(;|$)/);
    expect(policy).not.toMatch(/ws:|127\.0\.0\.1/);
    expect(policy).toMatch(/frame-ancestors 'none'/);
    const html = await page.text();
    expect(html).toContain(`content="${policy.replace("; frame-ancestors 'none'", '')}"`);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves nothing outside the renderer folder, on no other host, for no other method', async () => {
    for (const url of ['knob://app/../main/index.js', 'knob://app/%2e%2e/%2e%2e/package.json', 'knob://app/nope.js'])
      expect((await fakeElectron.fetch(url)).status, url).toBe(404);
    expect((await fakeElectron.fetch('knob://other/index.html')).status).toBe(404);
    expect((await fakeElectron.fetch('knob://app/index.html', { method: 'POST', body: 'x' })).status).toBe(405);
  });
});

describe('what a desktop user expects of the shell', () => {
  const menuItem = (path: string[]) => {
    let items = (fakeElectron.state.applicationMenu as { items: Array<Record<string, unknown>> }).items;
    let found: Record<string, unknown> | undefined;
    for (const label of path) {
      found = items.find((item) => item.label === label || item.role === label);
      if (found === undefined) throw new Error(`no menu item ${path.join(' > ')}`);
      items = (found.submenu ?? []) as Array<Record<string, unknown>>;
    }
    return found!;
  };
  const click = (path: string[]) => (menuItem(path).click as () => void)();
  const nextCommand = (what: string, after = shellCommands.length) =>
    fakeElectron.until(() => shellCommands[after], what);

  it('the window comes back where it was left', () => {
    expect(window.options).toMatchObject({ x: 100, y: 80, width: 1300, height: 800, minWidth: 1024, minHeight: 700 });
  });

  it('a file on the command line is opened once the page listens (not before)', async () => {
    await new Promise((r) => setTimeout(r, 50));
    bridge.onShellCommand((command) => shellCommands.push(command));
    expect(await nextCommand('the command-line file', 0)).toEqual({ command: 'open', path: MODEL_FILE });
    expect(shellCommands).toHaveLength(1); // not the switch, not the app's own folder
  });

  it('a second launch focuses the window and hands over its files', async () => {
    const focused = window.focused;
    const before = shellCommands.length;
    app.emit(
      'second-instance',
      {},
      ['/usr/bin/knob-studio', 'resources/data/t10k-images-idx3-ubyte.gz', 'missing.onnx', '--flag'],
      process.cwd(),
    );
    expect(await nextCommand('the second launch file', before)).toEqual({
      command: 'open',
      path: resolve('resources/data/t10k-images-idx3-ubyte.gz'),
    });
    expect(window.focused).toBeGreaterThan(focused);
    await new Promise((r) => setTimeout(r, 50));
    expect(shellCommands).toHaveLength(before + 1);
  });

  it('the File menu opens models, sources, traces and bundles through native dialogs, and exports', async () => {
    const labels = (menuItem(['&File']).submenu as Array<{ label?: string }>).map((item) => item.label).filter(Boolean);
    expect(labels).toEqual([
      'Open Model…',
      'Open Source…',
      'Open Trace…',
      'Import Bundle or Settings…',
      'Export Bundle…',
      'Recent Runs',
    ]);
    const before = shellCommands.length;
    fakeElectron.state.dialogAnswers.push('/data/other.onnx');
    click(['&File', 'Open Model…']);
    expect(await nextCommand('Open Model', before)).toEqual({ command: 'open', path: '/data/other.onnx' });
    expect(fakeElectron.state.dialogCalls.at(-1)).toMatchObject({
      kind: 'open',
      options: { filters: [{ extensions: ['onnx'] }] },
    });
    fakeElectron.state.dialogAnswers.push('/data/clip.mp4');
    click(['&File', 'Open Source…']);
    expect(await nextCommand('Open Source', before + 1)).toEqual({ command: 'open', path: '/data/clip.mp4' });
    expect((fakeElectron.state.dialogCalls.at(-1)!.options as { filters: unknown[] }).filters).toHaveLength(2);
    fakeElectron.state.dialogAnswers.push('/out/tuned.knob.zip');
    click(['&File', 'Export Bundle…']);
    expect(await nextCommand('Export Bundle', before + 2)).toEqual({
      command: 'export-bundle',
      path: '/out/tuned.knob.zip',
    });
    expect(fakeElectron.state.dialogCalls.at(-1)).toMatchObject({
      kind: 'save',
      options: { defaultPath: 'tuned.knob.zip' },
    });
    click(['&File', 'Open Trace…']); // cancelled: nothing is sent
    await new Promise((r) => setTimeout(r, 50));
    expect(shellCommands).toHaveLength(before + 3);
  });

  it('Recent Runs lists the kept runs and reopens one', async () => {
    const item = await fakeElectron.until(
      () => {
        const runs = menuItem(['&File', 'Recent Runs']).submenu as Array<{ label: string; click?: () => void }>;
        return runs.find((run) => run.click !== undefined);
      },
      'a recent run in the menu (the camera recording, kept when it stopped)',
      20_000,
    );
    const before = shellCommands.length;
    item.click!();
    expect(await nextCommand('open-run', before)).toMatchObject({
      command: 'open-run',
      id: expect.stringMatching(/^run-/),
    });
  });

  it('Help: the log folder, and About with the versions; development offers reload and devtools', async () => {
    click(['help', 'Open Log Folder']);
    expect(fakeElectron.state.openedPaths).toEqual([app.getPath('logs')]);
    click(['help', 'About Knob Studio']);
    const about = await fakeElectron.until(
      () => fakeElectron.state.dialogCalls.find((call) => call.kind === 'message'),
      'the About box',
    );
    expect(about.options).toMatchObject({ message: expect.stringMatching(/^Knob Studio \d+\.\d+\.\d+/) });
    expect((about.options as { detail: string }).detail).toMatch(
      /Node \d+\.\d+\.\d+\nV8 .*\nonnxruntime-node 1\.30\.0/,
    );
    const view = (menuItem(['&View']).submenu as Array<{ role?: string }>).map((item) => item.role);
    expect(view).toContain('toggleDevTools'); // app.isPackaged is false here
  });

  it('a crashed page is reloaded, and told so once it listens again; the frame port of the new page replaces the old', async () => {
    const before = shellCommands.length;
    window.webContents.emit('render-process-gone', {}, { reason: 'crashed', exitCode: 139 });
    await fakeElectron.until(() => window.webContents.reloads === 1, 'the reload');
    await new Promise((r) => setTimeout(r, 50));
    expect(shellCommands).toHaveLength(before); // the old page is gone; the notice waits
    const page = await fakeElectron.loadPage<KnobBridge>(window, PAGE_LOADS[1]!);
    const received: ShellCommand[] = [];
    page.api.onShellCommand((command) => received.push(command));
    const notice = await fakeElectron.until(() => received[0], 'the notice');
    expect(notice).toEqual({
      command: 'notice',
      message: 'The window stopped (crashed) and was reloaded; the session and its recordings are kept.',
    });
    bridge = page.api;
    expect((await call('app.info')).ok).toBe(true);
  });

  it('closing the window saves its place for the next start', async () => {
    window.setBounds({ x: 40, y: 30, width: 1200, height: 760 });
    window.close();
    const file = join(app.getPath('userData'), 'window-state.json');
    await fakeElectron.until(
      () => existsSync(file) && readFileSync(file, 'utf8').includes('"x": 40'),
      'the saved window state',
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      bounds: { x: 40, y: 30, width: 1200, height: 760 },
      maximized: false,
    });
    expect(fakeElectron.state.quitCalls).toBe(1);
  });

  it('quitting waits for the backend to close: the inference process ends, then the app exits', async () => {
    const inference = utilityProcess.forks.length;
    expect(inference).toBeGreaterThan(0);
    await fakeElectron.until(() => fakeElectron.state.exitCode === 0, 'the exit after the backend closed');
    expect(processAlive(inferencePid!)).toBe(false);
  });
});
