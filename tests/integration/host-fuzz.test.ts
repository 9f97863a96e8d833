/**
 * The browser-mode host under attack, on 127.0.0.1: more than 10,000 random and mutated request
 * lines, headers, upgrade attempts (with and without the token) and WebSocket messages (text and
 * binary), each bounded in time; the host must never die, never answer a request with an internal
 * error, and must serve a valid page and a valid API call afterwards. `GET //[`, which used to kill
 * the process (an URL that throws outside any try/catch), is a named case.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { API_METHODS } from '../../src-shared/api/contract';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { seededRandom, type RandomSource } from '../../src-shared/random';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { startWebHost, type WebHost } from '../../src-main/host/web-host';

let host: WebHost;
let backend: KnobBackend;
const random = seededRandom(20261130);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'knob-fuzz-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  backend = new KnobBackend();
  host = await startWebHost({ backend, rendererDir: dir });
});
afterAll(async () => {
  await host.close();
  await backend.close();
});

/** Sends raw bytes on a fresh TCP connection; resolves with the status line (or '' when closed silently). */
function raw(bytes: string | Buffer, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port: host.port });
    let received = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received.split('\r\n')[0] ?? '');
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      if (received.includes('\r\n')) done();
    });
    socket.on('error', done);
    socket.on('close', done);
    socket.write(bytes);
  });
}

/** Runs `task` on every item with at most `concurrency` at once. */
async function pool<T, R>(items: T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i]);
      }
    }),
  );
  return results;
}

const pick = <T>(r: RandomSource, items: readonly T[]): T => items[Math.floor(r() * items.length)];
const bytes = (r: RandomSource, n: number): string =>
  Array.from({ length: n }, () => String.fromCharCode(Math.floor(r() * 256))).join('');
const printable = (r: RandomSource, n: number): string =>
  Array.from({ length: n }, () => String.fromCharCode(32 + Math.floor(r() * 95))).join('');

const TARGETS = [
  '/',
  '//[',
  '/%',
  '/%zz',
  '/\u0000',
  '/../../etc/passwd',
  '/%2e%2e/%2e%2e/etc/passwd',
  '*',
  'http://[::1',
  '//[::',
  '/api?token=',
  '/index.html?%%%',
  '/\u00ff\u00fe',
  '//',
  '/a'.repeat(2000),
  '?',
  '#',
  'http://evil/',
  '/api',
];
const METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'OPTIONS',
  'CONNECT',
  'TRACE',
  'PATCH',
  'get',
  'G\u00c9T',
  '',
  ' ',
];

function mutate(r: RandomSource, text: string): string {
  const chars = text.split('');
  const edits = 1 + Math.floor(r() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(r() * (chars.length + 1));
    const choice = r();
    if (choice < 0.3) chars.splice(at, 1);
    else if (choice < 0.6) chars.splice(at, 0, String.fromCharCode(Math.floor(r() * 256)));
    else if (choice < 0.8) chars[at] = pick(r, ['\r', '\n', '\u0000', ' ', ':', '[', '%', '/', '?']);
    else chars.splice(at, Math.floor(r() * 8), printable(r, Math.floor(r() * 8)));
  }
  return chars.join('');
}

function requestLine(r: RandomSource): string {
  const kind = r();
  if (kind < 0.4) return `${pick(r, METHODS)} ${pick(r, TARGETS)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
  if (kind < 0.7) return `${mutate(r, `GET ${pick(r, TARGETS)} HTTP/1.1`)}\r\nHost: 127.0.0.1\r\n\r\n`;
  if (kind < 0.85) return `${bytes(r, 1 + Math.floor(r() * 200))}\r\n\r\n`;
  return `GET ${pick(r, TARGETS)} HTTP/${pick(r, ['0.9', '1.0', '2.0', '9', 'x', ''])}\r\n\r\n`;
}

function headers(r: RandomSource): string {
  const lines = ['Host: 127.0.0.1'];
  const count = Math.floor(r() * 6);
  for (let i = 0; i < count; i++) {
    const name = pick(r, [
      'Content-Length',
      'Transfer-Encoding',
      'Host',
      'Origin',
      'Upgrade',
      'Connection',
      'Cookie',
      printable(r, 8),
      bytes(r, 6),
      '',
    ]);
    const value = pick(r, [
      '-1',
      '99999999999999999999',
      'chunked',
      'chunked, identity',
      'websocket',
      '\u0000',
      bytes(r, 20),
      printable(r, 300),
      'x'.repeat(20000),
    ]);
    lines.push(r() < 0.5 ? `${name}: ${value}` : mutate(r, `${name}: ${value}`));
  }
  return `GET ${pick(r, TARGETS)} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${r() < 0.3 ? bytes(r, 50) : ''}`;
}

function upgrade(r: RandomSource): string {
  const token = r() < 0.3 ? host.token : r() < 0.5 ? '' : printable(r, 43);
  const path = pick(r, ['/api', '/api/', '/API', '//[', '/', '/api?x']);
  const lines = [
    `GET ${path}?token=${encodeURIComponent(token)} HTTP/1.1`,
    `Host: ${r() < 0.7 ? `127.0.0.1:${host.port}` : pick(r, ['evil.test', 'localhost', '127.0.0.1', bytes(r, 10)])}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${r() < 0.8 ? 'dGhlIHNhbXBsZSBub25jZQ==' : printable(r, 10)}`,
    `Sec-WebSocket-Version: ${pick(r, ['13', '8', 'x', ''])}`,
  ];
  if (r() < 0.5)
    lines.push(`Origin: ${pick(r, [`http://127.0.0.1:${host.port}`, 'http://evil.test', 'null', bytes(r, 12)])}`);
  const text = `${lines.join('\r\n')}\r\n\r\n`;
  return r() < 0.3 ? mutate(r, text) : text;
}

function apiMessage(r: RandomSource, id: number): string {
  const methods = Object.keys(API_METHODS).filter(
    (m) => !['model.load', 'bundle.loadModel', 'bundle.export', 'trace.save', 'source.open'].includes(m),
  );
  const values = [
    null,
    true,
    -1,
    0,
    1e308,
    -1e308,
    'x',
    '',
    [],
    {},
    [[[[]]]],
    { __proto__: { polluted: 1 } },
    'a'.repeat(5000),
  ];
  const params: Record<string, unknown> = {};
  const count = Math.floor(r() * 4);
  for (let i = 0; i < count; i++)
    params[
      pick(r, [
        'gate',
        'frame',
        'label',
        'path',
        'speed',
        'discard',
        'zeta',
        '__proto__',
        'constructor',
        printable(r, 5),
      ])
    ] = pick(r, values);
  const valid = JSON.stringify({ id, method: pick(r, methods), params });
  const kind = r();
  if (kind < 0.5) return valid;
  if (kind < 0.8) return mutate(r, valid);
  if (kind < 0.9) return bytes(r, 1 + Math.floor(r() * 100));
  return JSON.stringify(
    pick(r, [{ cancel: id }, { cancel: 'x' }, { id: {}, method: 'knobs.get' }, [1, 2], 'str', 42, null]),
  );
}

function binaryMessage(r: RandomSource): Buffer {
  const packet = encodeFramePacket({
    width: 1 + Math.floor(r() * 40),
    height: 1 + Math.floor(r() * 40),
    channels: r() < 0.5 ? 1 : 3,
    timestampSeconds: r() * 100,
    label: Math.floor(r() * 30) - 10,
    pixels: new Uint8Array(0),
  });
  const out = Buffer.from(r() < 0.5 ? packet : Buffer.from(bytes(r, Math.floor(r() * 64)), 'latin1'));
  for (let i = 0; i < 3 && out.length > 0; i++) out[Math.floor(r() * out.length)] = Math.floor(r() * 256);
  return out;
}

async function alive(): Promise<void> {
  expect(await raw(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\n\r\n`)).toBe('HTTP/1.1 200 OK');
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(host.token)}`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const reply = new Promise<{ ok: boolean }>((resolve) =>
    ws.once('message', (data) => resolve(JSON.parse(data.toString()))),
  );
  ws.send(JSON.stringify({ id: 1, method: 'knobs.get', params: {} }));
  expect((await reply).ok).toBe(true);
  ws.close();
}

describe('the host under fuzzing', () => {
  it('GET //[ is a 400, and the host carries on', async () => {
    expect(await raw('GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).toBe('HTTP/1.1 400 Bad Request');
    expect(
      await raw(
        `GET //[ HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
      ),
    ).toBe('HTTP/1.1 400 Bad Request');
    await alive();
  });

  it('survives 10,000+ random and mutated request lines, headers, upgrades and socket messages', async () => {
    const started = performance.now();
    const lines = Array.from({ length: 4000 }, () => requestLine(random));
    const headerCases = Array.from({ length: 2000 }, () => headers(random));
    const upgrades = Array.from({ length: 1000 }, () => upgrade(random));
    const statuses = await pool([...lines, ...headerCases, ...upgrades], 32, (text) =>
      raw(Buffer.from(text, 'latin1')),
    );
    // Every answer is a real HTTP status line or a closed connection, never a 5xx.
    for (const status of statuses)
      expect(status).toMatch(/^(HTTP\/1\.1 (101|200|400|401|403|404|405|413|414|431|501|505) .*|)$/);

    const ws = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(host.token)}`);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const replies: Array<{ ok?: boolean; error?: { code: string } }> = [];
    ws.on('message', (data) => replies.push(JSON.parse(data.toString())));
    for (let i = 0; i < 3000; i++) ws.send(apiMessage(random, i));
    for (let i = 0; i < 1000; i++) ws.send(binaryMessage(random));
    ws.send(JSON.stringify({ id: 'last', method: 'knobs.get', params: {} }));
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('no answer to the last request')), 30_000);
      const check = setInterval(() => {
        if (replies.some((r) => (r as { id?: unknown }).id === 'last')) {
          clearInterval(check);
          clearTimeout(deadline);
          resolve();
        }
      }, 20);
    });
    ws.close();
    const internal = replies.filter((r) => r.error?.code === 'INTERNAL');
    expect(internal, JSON.stringify(internal.slice(0, 3))).toEqual([]);
    const sent = lines.length + headerCases.length + upgrades.length + 4000;
    process.stdout.write(
      `host fuzz: ${sent} requests and messages in ${((performance.now() - started) / 1000).toFixed(1)} s, ${replies.length} socket replies\n`,
    );
    expect(sent).toBeGreaterThanOrEqual(10_000);
    await alive();
  }, 180_000);
});
