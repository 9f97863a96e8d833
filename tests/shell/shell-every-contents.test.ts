/**
 * The shell's navigation, window-open and permission guards hold for every web contents and
 * session the app creates, not only the main window's: the real shell (src-main/electron/main.ts)
 * against the fake 'electron' module, which announces each new web contents and session as
 * Electron does ('web-contents-created', 'session-created'). A second window in a session of its
 * own, made after start-up, is as locked down as the first; the main window gets each guard once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { app, BrowserWindow, fakeElectron, session, type FakeBrowserWindow } from '../support/fake-electron';
import { expectNavigationGuarded } from '../support/shell-guards';

let main: FakeBrowserWindow;

beforeAll(async () => {
  await import('../../src-main/electron/main');
  fakeElectron.launch();
  main = await fakeElectron.until(() => fakeElectron.state.windows[0], 'the main window');
});

afterAll(() => {
  for (const window of BrowserWindow.getAllWindows()) window.close();
  app.emit('will-quit');
});

type Session = typeof session.defaultSession;

function requested(target: Session, permission: string, details: Record<string, unknown>): Promise<boolean> {
  return new Promise((resolve) => target.permissionRequestHandler!(null, permission, resolve, details));
}

async function expectPermissionsRestricted(target: Session): Promise<void> {
  const appFrame = { requestingUrl: 'knob://app/index.html', isMainFrame: true };
  expect(await requested(target, 'media', { ...appFrame, mediaTypes: ['video'] })).toBe(true);
  expect(await requested(target, 'media', { ...appFrame, mediaTypes: ['audio'] })).toBe(false);
  expect(
    await requested(target, 'media', {
      requestingUrl: 'https://example.com/',
      isMainFrame: true,
      mediaTypes: ['video'],
    }),
  ).toBe(false);
  for (const permission of ['geolocation', 'notifications', 'clipboard-read', 'openExternal'])
    expect(await requested(target, permission, appFrame), permission).toBe(false);
  expect(target.permissionCheckHandler!(null, 'geolocation', 'knob://app', appFrame)).toBe(false);
  expect(target.devicePermissionHandler!({})).toBe(false);
}

describe('guards on every web contents', () => {
  it('the main window has each navigation guard once', () => {
    const contents = main.webContents;
    for (const event of ['will-navigate', 'will-frame-navigate', 'will-redirect', 'will-attach-webview'])
      expect(contents.listenerCount(event), event).toBe(1);
    expectNavigationGuarded(contents);
  });

  it('a second window, in a session of its own, gets the navigation, window-open and permission guards', async () => {
    const second = new BrowserWindow({ webPreferences: { partition: 'persist:second', sandbox: true } });
    expect(second.webContents.session).not.toBe(session.defaultSession);
    expectNavigationGuarded(second.webContents);
    await expectPermissionsRestricted(second.webContents.session);
    second.close();
  });

  it('a session made without a window, and the default session, are restricted too', async () => {
    await expectPermissionsRestricted(session.fromPartition('made-alone'));
    await expectPermissionsRestricted(session.defaultSession);
  });
});
