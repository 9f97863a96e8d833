import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Path of the Electron binary, or why it is not usable here. Reads electron's own path.txt instead
 * of require('electron'), which (since Electron 45) starts a download when the binary is missing.
 */
export function electronBinary(): { path: string } | { reason: string } {
  const packageDir = resolve('node_modules/electron');
  const pathFile = join(packageDir, 'path.txt');
  if (!existsSync(pathFile)) {
    return {
      reason:
        "the Electron binary is not installed (install scripts are off; 'npm start' fetches it once on a machine with internet access)",
    };
  }
  const relative = readFileSync(pathFile, 'utf8').trim();
  const path = process.env.ELECTRON_OVERRIDE_DIST_PATH
    ? join(process.env.ELECTRON_OVERRIDE_DIST_PATH, relative)
    : join(packageDir, 'dist', relative);
  if (!existsSync(path)) return { reason: `the Electron binary is not installed at ${path}` };
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) {
    return { reason: 'no display for Electron (set DISPLAY, e.g. run under xvfb-run)' };
  }
  return { path };
}
