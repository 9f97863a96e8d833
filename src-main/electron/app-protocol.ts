import type { Protocol } from 'electron';
import { contentSecurityPolicy, withMetaPolicy } from '../core/static/content-security-policy';
import { readStaticFile, resolveStaticFile } from '../core/static/static-files';

/**
 * The app's page is served from its own origin, knob://app, not from file://: under file:// the
 * policy's 'self' would match every local file, and any file: top frame would look like the app.
 * The scheme is standard (so it has an origin) and secure (so the camera works), and serves only
 * the built renderer's folder, read-only, with the Content-Security-Policy as a header and in
 * the page (connect-src 'self': the page talks over IPC, never to a socket).
 */
export const APP_SCHEME = 'knob';
export const APP_HOST = 'app';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** Must run before the app is ready (Electron's rule for privileged schemes). */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true } },
  ]);
}

export function serveAppProtocol(protocol: Pick<Protocol, 'handle'>, rendererDir: string): void {
  protocol.handle(APP_SCHEME, (request) => appResponse(request, rendererDir));
}

const POLICY = contentSecurityPolicy({ connectSources: [] });

/** The response to one request on the app scheme: a file of the renderer's folder, or 404/405. */
export async function appResponse(request: Request, rendererDir: string): Promise<Response> {
  const plain = (status: number, text: string) =>
    new Response(text, { status, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'method not allowed');
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return plain(400, 'bad request');
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return plain(404, 'not found');
  const file = await resolveStaticFile(rendererDir, url.pathname);
  if (file === null) return plain(404, 'not found');
  const raw = await readStaticFile(file.path);
  const body = file.path.endsWith('.html') ? withMetaPolicy(raw.toString('utf8'), POLICY) : new Uint8Array(raw);
  return new Response(request.method === 'HEAD' ? null : body, {
    status: 200,
    headers: {
      'Content-Type': file.contentType,
      'Content-Security-Policy': POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    },
  });
}
