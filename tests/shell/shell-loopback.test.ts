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
import type { MessagePort as NodeMessagePort } from 'node:worker_threads';
import {
  IPC_CANCEL_CHANNEL,
  IPC_FRAME_PORT_CHANNEL,
  IPC_OPEN_FILE_CHANNEL,
  IPC_REQUEST_CHANNEL,
  KNOB_BRIDGE_FUNCTIONS,
  type KnobBridge,
} from '../../src-shared/api/bridge';
import { API_METHODS } from '../../src-shared/api/contract';
import type { EventEnvelope, ResponseEnvelope } from '../../src-shared/api/envelope';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { MAX_REQUEST_BYTES } from '../../src-shared/api/envelope';
import { fakeElectron, ipcRenderer, session, utilityProcess, type FakeBrowserWindow } from '../support/fake-electron';
import { fashionMnistSample } from '../support/fashion-mnist';

let window: FakeBrowserWindow;
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

beforeAll(async () => {
  await import('../../src-main/electron/main');
  fakeElectron.launch();
  window = await fakeElectron.until(() => fakeElectron.state.windows[0], 'the main window');
  const page = await fakeElectron.loadPage<KnobBridge>(window, PAGE_LOADS[0]!);
  bridge = page.api;
  bridge.onEvent((event) => events.push(event));
});

afterAll(async () => {
  await call('stream.stop').catch(() => undefined);
  window.close();
  (await import('../support/fake-electron')).app.emit('will-quit');
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
    for (const purpose of ['toString', '__proto__', 'constructor', 'hasOwnProperty', 42, null]) {
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

  it("refuses every other permission of Electron's list, to the app and to anyone", async () => {
    for (const permission of ELECTRON_PERMISSIONS.filter((p) => p !== 'media')) {
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
    const contents = window.webContents;
    for (const url of ['https://example.com/', 'file:///etc/passwd', 'knob://app/other.html'])
      for (const event of ['will-navigate', 'will-frame-navigate'])
        expect(contents.fireNavigation(event, url), `${event} ${url}`).toBe(true);
    expect(contents.fireNavigation('will-redirect', 'https://example.com/')).toBe(true);
    expect(contents.fireNavigation('will-redirect', 'knob://app/index.html')).toBe(false);
    expect(contents.fireNavigation('will-attach-webview', 'https://example.com/')).toBe(true);
    expect(contents.windowOpenHandler!({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler!({ url: 'knob://app/index.html' })).toEqual({ action: 'deny' });
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
