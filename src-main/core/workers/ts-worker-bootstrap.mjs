// Runs a TypeScript worker entry from the sources (tests, `npm run web`, the CLI through tsx):
// registers tsx in the worker, then imports the entry named in workerData.entry. The electron-vite
// build compiles each worker entry to JavaScript and starts it directly, without this file.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
