import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Local denial of service, bounded. Any local program can open TCP connections to the host; idle
 * ones cost a file descriptor each, and about 1,100 of them used to exhaust the process's
 * descriptors so that every file open failed (EMFILE). So:
 * - at most `maxSockets` connections at once (page and static-file requests and API WebSockets
 *   together): one more is closed as soon as it is accepted (Node's server.maxConnections), so its
 *   descriptor is released at once;
 * - a connection that has not become an authenticated API WebSocket (the token checked at the
 *   upgrade) within `authTimeoutMs` is closed: at once when it has no request in flight, else when
 *   its response is sent, and in any case one more `authTimeoutMs` later (a client that never reads
 *   its response). The page's own static requests finish long before that; a browser opens a new
 *   connection when it needs one.
 * An authenticated WebSocket stays open however long it lives, so the desk keeps working while
 * someone floods the port. A new desk (or a reload) competes for the slots the flood frees: a
 * program that reconnects in a tight loop can keep it out as long as the flood lasts (what is
 * bounded is the host's descriptors and the open desk's service, not a new client's wait).
 */
export const DEFAULT_MAX_SOCKETS = 64;
export const DEFAULT_AUTH_TIMEOUT_MS = 5_000;

export interface ConnectionLimits {
  maxSockets: number;
  authTimeoutMs: number;
}

interface Pending {
  timer: NodeJS.Timeout;
  requestsInFlight: number;
  expired: boolean;
}

export interface ConnectionGuard {
  /** The socket passed the token check at its WebSocket upgrade: it is no longer timed. */
  authenticated(socket: Duplex): void;
}

export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  if (!Number.isInteger(limits.maxSockets) || limits.maxSockets < 1)
    throw new RangeError(`maxSockets must be a positive integer, not ${limits.maxSockets}`);
  if (!(limits.authTimeoutMs > 0)) throw new RangeError(`authTimeoutMs must be positive, not ${limits.authTimeoutMs}`);
  server.maxConnections = limits.maxSockets;
  const pending = new Map<Duplex, Pending>();

  const expire = (socket: Socket, entry: Pending): void => {
    entry.expired = true;
    if (entry.requestsInFlight === 0) {
      socket.destroy();
      return;
    }
    // A response is being sent: let it finish, but not forever.
    entry.timer = setTimeout(() => socket.destroy(), limits.authTimeoutMs);
    entry.timer.unref();
  };

  server.on('connection', (socket: Socket) => {
    const entry: Pending = {
      timer: setTimeout(() => expire(socket, entry), limits.authTimeoutMs),
      requestsInFlight: 0,
      expired: false,
    };
    entry.timer.unref();
    pending.set(socket, entry);
    socket.once('close', () => {
      clearTimeout(entry.timer);
      pending.delete(socket);
    });
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const entry = pending.get(socket);
    if (entry === undefined) return;
    entry.requestsInFlight++;
    response.once('close', () => {
      entry.requestsInFlight--;
      // after the deadline: the response is out, the connection goes (once its bytes are written)
      if (entry.expired && entry.requestsInFlight === 0) socket.destroySoon();
    });
  });

  return {
    authenticated(socket: Duplex): void {
      const entry = pending.get(socket);
      if (entry === undefined) return;
      clearTimeout(entry.timer);
      pending.delete(socket);
    },
  };
}
