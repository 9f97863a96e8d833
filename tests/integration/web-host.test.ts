/**
 * The browser-mode host: 127.0.0.1 only, per-run token, Host/Origin checks, and every request
 * validated; malformed, oversized and unknown requests get { code, message } and the host keeps
 * serving.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { MAX_SOCKET_MESSAGE_BYTES, startWebHost, type WebHost } from '../../src-main/host/web-host';

let host: WebHost;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'knob-host-'));
  // the built page's strict meta policy (connect-src 'self'), which the host rewrites
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'self'; connect-src 'self'" /><title>t</title>`,
  );
  host = await startWebHost({ backend: new KnobBackend(), rendererDir: dir });
});
afterAll(async () => host.close());

interface Reply {
  id: unknown;
  ok: boolean;
  result?: { gate: { zeta: number }; version: number };
  error?: { code: string; message: string };
}

/** Whatever the host sends: a Reply or an event. */
type HostMessage = Reply & { event?: string; data?: { version: number } };

function apiUrl(token = host.token): string {
  return `ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(token)}`;
}

function connect(url = apiUrl(), headers: Record<string, string> = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

function nextMessage(ws: WebSocket, filter: (message: HostMessage) => boolean = () => true): Promise<HostMessage> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData): void => {
      const message = JSON.parse(data.toString()) as HostMessage;
      if (!filter(message)) return;
      ws.off('message', onMessage);
      resolve(message);
    };
    ws.on('message', onMessage);
  });
}

async function request(ws: WebSocket, payload: unknown): Promise<Reply> {
  const reply = nextMessage(ws, (m) => 'ok' in m);
  ws.send(typeof payload === 'string' ? payload : JSON.stringify(payload));
  return reply;
}

describe('web host', () => {
  it('serves only on 127.0.0.1, with a content security policy, and not outside its folder', async () => {
    expect(host.url.startsWith(`http://127.0.0.1:${host.port}/?token=`)).toBe(true);
    expect(host.token.length).toBeGreaterThanOrEqual(43);
    const page = await fetch(`http://127.0.0.1:${host.port}/`);
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("script-src 'self'");
    // the page's own socket by its exact port, not any local port; the page's meta says the same
    expect(policy).toContain(`connect-src 'self' ws://127.0.0.1:${host.port};`);
    expect(await page.text()).toContain(`content="${policy.replace("; frame-ancestors 'none'", '')}"`);
    expect((await fetch(`http://127.0.0.1:${host.port}/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${host.port}/%2e%2e/%2e%2e/etc/passwd`)).status).toBe(404);
  });

  it('refuses the API without the token, with a wrong token, a foreign Origin or a foreign Host', async () => {
    await expect(connect(`ws://127.0.0.1:${host.port}/api`)).rejects.toThrow(/401/);
    await expect(connect(apiUrl('not-the-token'))).rejects.toThrow(/401/);
    await expect(connect(apiUrl(), { Origin: 'http://evil.example' })).rejects.toThrow(/403/);
    await expect(connect(apiUrl(), { Host: `evil.example:${host.port}` })).rejects.toThrow(/403/);
    const ws = await connect(apiUrl(), { Origin: `http://127.0.0.1:${host.port}` });
    ws.close();
  });

  it('answers valid requests and broadcasts events', async () => {
    const ws = await connect();
    const initial = await request(ws, { id: 1, method: 'knobs.get' });
    expect(initial.ok).toBe(true);
    expect(initial.result!.gate.zeta).toBe(0.7);
    const event = nextMessage(ws, (m) => m.event === 'knobs.changed');
    const set = await request(ws, { id: 2, method: 'knobs.set', params: { gate: { zeta: 1.2 } } });
    expect(set.ok).toBe(true);
    expect(set.result!.gate.zeta).toBe(1.2);
    expect(set.result!.version).toBe(initial.result!.version + 1);
    expect((await event).data!.version).toBe(set.result!.version);
    ws.close();
  });

  it('answers malformed, invalid, unknown, unavailable and oversized requests with { code, message } and keeps serving', async () => {
    const ws = await connect();
    const cases: Array<[unknown, string]> = [
      ['{not json', 'BAD_REQUEST'],
      ['"just a string"', 'BAD_REQUEST'],
      [{ method: 'knobs.get' }, 'BAD_REQUEST'],
      [{ id: 3, method: 'knobs.get', extra: 1 }, 'BAD_REQUEST'],
      [{ id: 4, method: 'no.such.method' }, 'UNKNOWN_METHOD'],
      [{ id: 5, method: 'knobs.set', params: { gate: { zeta: -1 } } }, 'BAD_REQUEST'],
      [{ id: 6, method: 'knobs.set', params: { gate: { wnRadPerSec: 'fast' } } }, 'BAD_REQUEST'],
      [{ id: 7, method: 'knobs.set', params: { gate: { variant: 'third-order' } } }, 'BAD_REQUEST'],
      [{ id: 8, method: 'stream.start', params: {} }, 'NOT_AVAILABLE'],
      [{ id: 13, method: 'bundle.import', params: { path: '/nonexistent/knob-settings.json' } }, 'INVALID_INPUT'],
      [{ id: 12, method: 'model.load', params: { path: '/nonexistent/m.onnx' } }, 'INVALID_INPUT'],
      [
        JSON.stringify({ id: 9, method: 'knobs.get', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }),
        'REQUEST_TOO_LARGE',
      ],
    ];
    for (const [payload, code] of cases) {
      const reply = await request(ws, payload);
      expect(reply.ok, JSON.stringify(reply).slice(0, 200)).toBe(false);
      expect(reply.error!.code).toBe(code);
      expect(reply.error!.message.length).toBeGreaterThan(0);
    }
    const invalid = await request(ws, { id: 10, method: 'knobs.set', params: { gate: { zeta: -1 } } });
    expect(invalid.error!.message).toMatch(/params\.gate\.zeta/);
    // Binary messages are frame packets, not requests; a malformed one is refused by an event.
    const binaryReply = nextMessage(ws, (m) => m.event === 'frame.rejected');
    ws.send(Buffer.from([1, 2, 3]));
    expect(((await binaryReply).data as unknown as { code: string }).code).toBe('BAD_REQUEST');
    // Still serving on the same socket.
    expect((await request(ws, { id: 11, method: 'knobs.get' })).ok).toBe(true);
    ws.close();
  });

  it('closes a socket whose message exceeds the size limit, and keeps serving new ones', async () => {
    const ws = await connect();
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    ws.send(Buffer.alloc(MAX_SOCKET_MESSAGE_BYTES + 1));
    expect(await closed).toBe(1009);
    const again = await connect();
    expect((await request(again, { id: 1, method: 'app.info' })).ok).toBe(true);
    again.close();
  });
});
