import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KnobBackend } from '../core/backend/knob-backend';
import { defaultLogDirectory } from '../core/logging/log-location';
import { openLogFile } from '../core/logging/logger';
import { startWebHost } from './web-host';

/** `npm run web`: browser mode on 127.0.0.1 with a per-run token. Port: --port N or KNOB_PORT. */
async function main(): Promise<void> {
  const portFlag = process.argv.indexOf('--port');
  const port = Number(portFlag >= 0 ? process.argv[portFlag + 1] : (process.env.KNOB_PORT ?? 0));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`knob web: invalid port '${process.argv[portFlag + 1] ?? process.env.KNOB_PORT}'\n`);
    process.exit(2);
  }
  const rendererDir = resolve('out/renderer');
  if (!existsSync(resolve(rendererDir, 'index.html'))) {
    process.stderr.write(`knob web: no built renderer in ${rendererDir}; run 'npm run build' first\n`);
    process.exit(1);
  }
  const log = await openLogFile({ directory: defaultLogDirectory() });
  const backend = new KnobBackend({ log });
  const host = await startWebHost({ backend, rendererDir, port });
  process.stdout.write(
    `Knob Studio (browser mode) is serving on 127.0.0.1 only.\nOpen: ${host.url}\nLog: ${log.currentFile() ?? 'none'}\n`,
  );
  const stop = (): void => {
    void Promise.all([host.close(), backend.close()]).then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
