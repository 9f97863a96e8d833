/**
 * What `electron-vite build` produces (the test run's global setup builds it into out/), checked
 * as Electron will load it: the preload bundle is CommonJS and requires nothing but 'electron' (a
 * sandboxed preload can require nothing else), shown by running it in a fresh V8 context whose
 * require knows only 'electron'; package.json's main is a built file; the renderer's page carries
 * the strict Content-Security-Policy.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { KNOB_BRIDGE_FUNCTIONS } from '../../src-shared/api/bridge';

describe('the build output', () => {
  it('the preload is CommonJS that requires only electron, and exposes the bridge', () => {
    const source = readFileSync('out/preload/index.cjs', 'utf8');
    const required: string[] = [];
    const exposed = new Map<string, Record<string, unknown>>();
    const electron = {
      contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => exposed.set(key, api) },
      ipcRenderer: { postMessage() {}, invoke: async () => null, on() {}, removeListener() {} },
      webUtils: { getPathForFile: () => '' },
    };
    const module = { exports: {} };
    runInNewContext(source, {
      module,
      exports: module.exports,
      require: (id: string) => {
        required.push(id);
        if (id !== 'electron') throw new Error(`the preload requires '${id}'`);
        return electron;
      },
      MessageChannel,
    });
    expect([...new Set(required)]).toEqual(['electron']);
    expect(Object.keys(exposed.get('knobBridge') ?? {}).sort()).toEqual([...KNOB_BRIDGE_FUNCTIONS].sort());
    expect(source).not.toMatch(/^\s*(import|export)\s/m);
  });

  it("package.json's main is the built main process", () => {
    const { main } = JSON.parse(readFileSync('package.json', 'utf8')) as { main: string };
    expect(main).toBe('out/main/index.js');
    expect(existsSync(main)).toBe(true);
    // every worker the main process starts (startEntryWorker or callOnFreshThread(import.meta.url,
    // NAME), over one line or several) is built beside it
    const sources = execFileSync('git', ['ls-files', 'src-main/*.ts'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    const started = sources.flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /(?:startEntryWorker|callOnFreshThread)(?:<[^>(]*>)?\(\s*import\.meta\.url,\s*'([a-z-]+)'/g,
        ),
      ].map((call) => call[1]!),
    );
    expect(started).toEqual(
      expect.arrayContaining(['tuning-worker', 'field-worker', 'heads-worker', 'live-watch-worker']),
    );
    for (const entry of new Set(['inference-process', ...started]))
      expect(existsSync(`out/main/${entry}.js`), entry).toBe(true);
  });

  it("the renderer's page carries the strict Content-Security-Policy", () => {
    const html = readFileSync('out/renderer/index.html', 'utf8');
    const meta = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
    expect(meta).not.toBeNull();
    const policy = meta![1]!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).toMatch(/connect-src 'self'(;|$)/);
    expect(policy).not.toMatch(/ws:|unsafe-eval/);
  });
});
