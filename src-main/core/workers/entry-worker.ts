import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on one of the main build's entries (electron.vite.config.ts), named
 * relative to the calling module: in a build the compiled `<name>.js` beside the caller; from the
 * sources (tests, the CLI, browser mode through tsx) `<name>.ts` through the tsx bootstrap.
 */
export function startEntryWorker(callerUrl: string, entry: string): Worker {
  const callerDirectory = dirname(fileURLToPath(callerUrl));
  if (fileURLToPath(callerUrl).endsWith('.ts')) {
    const bootstrap = join(dirname(fileURLToPath(import.meta.url)), 'ts-worker-bootstrap.mjs');
    return new Worker(bootstrap, { workerData: { entry: pathToFileURL(join(callerDirectory, `${entry}.ts`)).href } });
  }
  return new Worker(join(callerDirectory, `${entry}.js`));
}
