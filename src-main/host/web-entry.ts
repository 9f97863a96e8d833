import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KnobError } from '../../src-shared/errors';
import { KnobBackend } from '../core/backend/knob-backend';
import { defaultLogDirectory } from '../core/logging/log-location';
import { openLogFile } from '../core/logging/logger';
import { defaultRecentRunsFolder } from '../core/recent-runs/recent-runs-location';
import { RecentRunsStore } from '../core/recent-runs/recent-runs-store';
import { startWebHost } from './web-host';

/**
 * `npm run web`: browser mode on 127.0.0.1 with a per-run token. Port: --port N or KNOB_PORT.
 * Failures are one line: `knob web: <problem>` (exit 1; 2 for a bad port).
 */
async function main(): Promise<number> {
  const portFlag = process.argv.indexOf('--port');
  const portText = portFlag >= 0 ? process.argv[portFlag + 1] : process.env.KNOB_PORT;
  const port = Number(portText ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`knob web: invalid port '${portText}'\n`);
    return 2;
  }
  const rendererDir = resolve('out/renderer');
  if (!existsSync(resolve(rendererDir, 'index.html'))) {
    process.stderr.write(`knob web: no built renderer in ${rendererDir}; run 'npm run build' first\n`);
    return 1;
  }
  const log = await openLogFile({ directory: defaultLogDirectory() });
  const recentRuns = await RecentRunsStore.open(defaultRecentRunsFolder(), { logger: log.logger });
  const backend = new KnobBackend({ log, recentRuns });
  let host;
  try {
    host = await startWebHost({ backend, rendererDir, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EADDRINUSE'
        ? `port ${port} is already in use (choose another with --port N)`
        : (error as Error).message;
    process.stderr.write(`knob web: cannot serve on 127.0.0.1: ${reason}\n`);
    await backend.close();
    return 1;
  }
  process.stdout.write(
    `Knob Studio (browser mode) is serving on 127.0.0.1 only.\nOpen: ${host.url}\nLog: ${log.currentFile() ?? 'none'}\nRecent runs: ${recentRuns.folder}\n`,
  );
  const served = host;
  const stop = (): void => {
    void Promise.all([served.close(), backend.close()]).then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return 0;
}

main().then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`knob web: ${error instanceof KnobError ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
