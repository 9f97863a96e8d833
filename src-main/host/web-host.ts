import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KnobBackend } from '../core/backend/knob-backend';
import { toErrorPayload } from '../../src-shared/errors';
import { reportError } from '../core/logging/internal-error';
import { ApiConnection } from '../core/backend/api-connection';
import { contentSecurityPolicy, withMetaPolicy } from '../core/static/content-security-policy';
import { readStaticFile, resolveStaticFile } from '../core/static/static-files';
import { DEFAULT_AUTH_TIMEOUT_MS, DEFAULT_MAX_SOCKETS, limitConnections } from './connection-limits';

/** Largest WebSocket message accepted at all (binary camera frames later); above it ws closes the socket. */
export const MAX_SOCKET_MESSAGE_BYTES = 16 * 1024 * 1024;
const HOST = '127.0.0.1';

export interface WebHostOptions {
  backend: KnobBackend;
  /** Folder of the built renderer (electron-vite's out/renderer). */
  rendererDir: string;
  /** 0 picks a free port. */
  port?: number;
  /** Connections open at once, of every kind (DEFAULT_MAX_SOCKETS; see connection-limits.ts). */
  maxSockets?: number;
  /** A connection that is not an authenticated API socket by then is closed (DEFAULT_AUTH_TIMEOUT_MS). */
  authTimeoutMs?: number;
}

export interface WebHost {
  /** The URL to open, token included. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

function tokensMatch(expected: string, offered: string | null): boolean {
  if (offered === null) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(offered);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Browser mode: serves the built renderer and the typed API over a WebSocket, on 127.0.0.1 only.
 * The API socket requires the per-run token (random, 256 bits) and refuses foreign Host and Origin
 * headers, so another web page or a DNS-rebinding attack cannot drive the backend. Connections are
 * capped and unauthenticated ones timed out (connection-limits.ts), so a local flood of idle sockets
 * cannot use up the process's file descriptors.
 */
export async function startWebHost(options: WebHostOptions): Promise<WebHost> {
  const rendererDir = resolve(options.rendererDir);
  const token = randomBytes(32).toString('base64url');
  const sockets = new Set<WebSocket>();
  let port = 0;

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    serveStatic(request, response).catch((error: unknown) => failRequest(response, error));
  });
  const guard = limitConnections(server, {
    maxSockets: options.maxSockets ?? DEFAULT_MAX_SOCKETS,
    authTimeoutMs: options.authTimeoutMs ?? DEFAULT_AUTH_TIMEOUT_MS,
  });
  // A request line or headers Node cannot parse: 400 and the connection closes; the server carries on.
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });

  /** The request's URL, or null when it cannot be parsed (answered 400). */
  function requestUrl(request: IncomingMessage): URL | null {
    try {
      return new URL(request.url ?? '/', `http://${HOST}:${port}`);
    } catch {
      return null;
    }
  }

  function failRequest(response: ServerResponse, error: unknown): void {
    reportError(options.backend.log.logger, error, { during: 'a static file request' });
    if (response.headersSent) response.destroy();
    else response.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error');
  }

  async function serveStatic(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405).end();
      return;
    }
    const url = requestUrl(request);
    if (url === null) {
      response.writeHead(400, { 'Content-Type': 'text/plain' }).end('bad request');
      return;
    }
    const file = await resolveStaticFile(rendererDir, url.pathname);
    if (file === null) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const policy = contentSecurityPolicy({ connectSources: [`ws://${HOST}:${port}`] });
    const raw = await readStaticFile(file.path);
    const body = file.path.endsWith('.html') ? withMetaPolicy(raw.toString('utf8'), policy) : raw;
    response.writeHead(200, {
      'Content-Type': file.contentType,
      'Content-Security-Policy': policy,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    response.end(request.method === 'HEAD' ? undefined : body);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_SOCKET_MESSAGE_BYTES });

  server.on('upgrade', (request, socket, head) => {
    const refuse = (status: string): void => {
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
      else socket.destroy();
    };
    socket.on('error', () => socket.destroy());
    try {
      const url = requestUrl(request);
      if (url === null) return refuse('400 Bad Request');
      const allowedHost = `${HOST}:${port}`;
      const origin = request.headers.origin;
      if (url.pathname !== '/api') return refuse('404 Not Found');
      if (request.headers.host !== allowedHost) return refuse('403 Forbidden');
      if (origin !== undefined && origin !== `http://${allowedHost}`) return refuse('403 Forbidden');
      if (!tokensMatch(token, url.searchParams.get('token'))) return refuse('401 Unauthorized');
      wss.handleUpgrade(request, socket, head, (ws) => {
        guard.authenticated(socket);
        wss.emit('connection', ws, request);
      });
    } catch (error) {
      reportError(options.backend.log.logger, error, { during: 'a WebSocket upgrade' });
      refuse('400 Bad Request');
    }
  });

  wss.on('connection', (ws: WebSocket) => {
    const connection = new ApiConnection(options.backend);
    sockets.add(ws);
    const forget = (): void => {
      sockets.delete(ws);
      connection.close();
    };
    ws.on('close', forget);
    ws.on('error', forget);
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        // The binary frame path: one camera frame per message; only refusals are reported (as events).
        try {
          const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
          options.backend.pushFrame(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        } catch (error) {
          if (ws.readyState === ws.OPEN)
            ws.send(JSON.stringify({ event: 'frame.rejected', data: toErrorPayload(error) }));
        }
        return;
      }
      connection
        .receive(data.toString('utf8'))
        .then((response) => {
          if (response !== null && ws.readyState === ws.OPEN) ws.send(JSON.stringify(response));
        })
        .catch((error: unknown) => reportError(options.backend.log.logger, error, { during: 'answering a request' }));
    });
  });

  const unsubscribe = options.backend.subscribe((event, data) => {
    const message = JSON.stringify({ event, data });
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(message);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://${HOST}:${port}/?token=${token}`,
    port,
    token,
    close: async () => {
      unsubscribe();
      for (const ws of sockets) ws.terminate();
      wss.close();
      const closed = new Promise<void>((done) => server.close(() => done()));
      // idle and unauthenticated connections too, rather than waiting for their timeouts
      server.closeAllConnections();
      await closed;
    },
  };
}
