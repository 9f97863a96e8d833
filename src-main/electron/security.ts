import type { App, Session, WebContents, WebFrameMain } from 'electron';
import { APP_ORIGIN } from './app-protocol';

/**
 * Electron's security checklist, as the shell applies it. One rule underlies every check here:
 * the only trusted page is the app's own, the top frame at the app's origin (knob://app, served
 * by app-protocol.ts; in development the electron-vite dev server's origin instead, which only
 * an unpackaged app accepts). Requests over IPC, the frame port, permissions and navigation are
 * all decided against that origin:
 * - IPC: answered only for the app's top frame (not a subframe, not another origin);
 * - permissions: the camera ('media', video only) and MIDI ('midi': the hardware knobs; never
 *   'midiSysex', which can rewrite a device's firmware) for the app's top frame, nothing else for anyone;
 * - navigation: none by the page, no redirect away from the app, no new window, no webview.
 * The navigation and permission rules hold for every web contents and session the app creates
 * (guardEverything), not only the main window's.
 */
export interface TrustedOrigin {
  /** The origin of the app's page: APP_ORIGIN, or the dev server's in an unpackaged development run. */
  origin: string;
}

/**
 * The app's origin for this run. ELECTRON_RENDERER_URL (electron-vite dev) is honoured only when
 * the app is not packaged: in a packaged app an environment variable must not be able to point the
 * window, and the whole API, at another page.
 */
export function trustedOrigin(isPackaged: boolean, devServerUrl: string | undefined): TrustedOrigin & { url: string } {
  if (!isPackaged && devServerUrl !== undefined && URL.canParse(devServerUrl)) {
    const url = new URL(devServerUrl);
    const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if ((url.protocol === 'http:' || url.protocol === 'https:') && local) return { origin: url.origin, url: url.href };
  }
  return { origin: APP_ORIGIN, url: `${APP_ORIGIN}/index.html` };
}

/**
 * Whether `url` is at the app's origin (unparsable URLs are not). Compared as scheme://host, not by
 * URL.origin: Node's URL gives a custom scheme such as knob: the opaque origin 'null'.
 */
export function isAppUrl(url: string, trust: TrustedOrigin): boolean {
  try {
    const parsed = new URL(url);
    return parsed.host !== '' && `${parsed.protocol}//${parsed.host}` === trust.origin;
  } catch {
    return false;
  }
}

/** The app's own top frame: no parent, at the app's origin. */
export function isTrustedFrame(frame: WebFrameMain | null | undefined, trust: TrustedOrigin): boolean {
  if (frame === null || frame === undefined || frame.parent !== null) return false;
  return isAppUrl(frame.url, trust);
}

/**
 * Permission requests and checks: the camera and MIDI without system exclusive for the app's top
 * frame, everything else refused.
 */
export function restrictPermissions(session: Session, trust: TrustedOrigin): void {
  session.setPermissionRequestHandler((_contents, permission, callback, details) => {
    const mediaTypes = 'mediaTypes' in details ? (details.mediaTypes ?? []) : [];
    const video = mediaTypes.length > 0 && mediaTypes.every((type) => type === 'video');
    const wanted = (permission === 'media' && video) || permission === 'midi';
    callback(wanted && details.isMainFrame && isAppUrl(details.requestingUrl, trust));
  });
  session.setPermissionCheckHandler((_contents, permission, requestingOrigin, details) => {
    const mainFrame = details.isMainFrame ?? false;
    const wanted = (permission === 'media' && details.mediaType === 'video') || permission === 'midi';
    return (
      wanted &&
      mainFrame &&
      isAppUrl(requestingOrigin, trust) &&
      isAppUrl(details.requestingUrl ?? requestingOrigin, trust)
    );
  });
  // No USB, HID, serial or Bluetooth device is ever offered to a page.
  session.setDevicePermissionHandler(() => false);
}

/**
 * No navigation by the page (top frame or subframe: the app never navigates, and these events fire
 * only for navigations the page starts, not for the shell's own loadURL), no redirect away from
 * the app, no new window, no webview.
 */
export function guardNavigation(contents: WebContents, trust: TrustedOrigin): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-frame-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => {
    if (!isAppUrl(event.url, trust)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/**
 * The guards for every web contents the app ever creates (the main window's, any later window's,
 * DevTools', anything a library opens) and for every session, before any of them loads a page:
 * Electron emits these events as each is created. Sessions already made (the default one) are
 * restricted by their caller.
 */
export function guardEverything(app: App, trust: TrustedOrigin): void {
  const restricted = new WeakSet<Session>();
  const restrict = (session: Session): void => {
    if (restricted.has(session)) return;
    restricted.add(session);
    restrictPermissions(session, trust);
  };
  app.on('session-created', restrict);
  app.on('web-contents-created', (_event, contents) => {
    guardNavigation(contents, trust);
    restrict(contents.session);
  });
}
