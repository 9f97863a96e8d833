import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { mainEntry } from './main-entry';

/**
 * Starts a worker thread on one of the main build's entries, named relative to the calling module
 * (main-entry.ts says which file): compiled JavaScript directly, a TypeScript source through the
 * tsx bootstrap.
 */
export function startEntryWorker(callerUrl: string, entry: string): Worker {
  const { path, typescript } = mainEntry(callerUrl, entry);
  if (!typescript) return new Worker(path);
  const bootstrap = join(dirname(fileURLToPath(import.meta.url)), 'ts-worker-bootstrap.mjs');
  return new Worker(bootstrap, { workerData: { entry: pathToFileURL(path).href } });
}
