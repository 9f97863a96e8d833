/**
 * The browser-mode host in a process of its own, for tests that attack it and measure it: it starts
 * the backend and the WebSocket host on 127.0.0.1, sends { port, token } to its parent over IPC, and
 * serves the renderer folder given as its argument (or a bare page), answers 'peak' with its peak resident memory (getrusage's ru_maxrss, kilobytes) and 'usage' with
 * its thread count and CPU time. Started with
 * child_process.fork(..., { execArgv: ['--import', 'tsx'] }).
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { startWebHost } from '../../src-main/host/web-host';
import { peakRssKb } from './peak-memory.mjs';

// the built renderer when the parent names one (the desk served from a backend of its own), else a bare page
let rendererDir = process.argv[2];
if (rendererDir === undefined) {
  rendererDir = mkdtempSync(join(tmpdir(), 'knob-host-'));
  writeFileSync(join(rendererDir, 'index.html'), '<!doctype html><title>knob</title>');
}
const backend = new KnobBackend();
const host = await startWebHost({ backend, rendererDir });
process.on('message', (message: unknown) => {
  if (message === 'peak') process.send?.({ peakRssKb: peakRssKb() });
  // the process's threads (Linux: one entry per thread) and CPU time so far, for tests that check
  // abandoned work is stopped
  if (message === 'usage') {
    const cpu = process.cpuUsage();
    process.send?.({ threads: readdirSync('/proc/self/task').length, cpuMicros: cpu.user + cpu.system });
  }
  if (message === 'stop') void Promise.all([host.close(), backend.close()]).then(() => process.exit(0));
});
process.send?.({ port: host.port, token: host.token, url: host.url });
