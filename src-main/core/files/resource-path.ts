import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The app's resources/ folder, wherever the code runs from: the sources (src-main/core/...), the
 * electron-vite build (out/main/...) or a packaged app (both inside app.asar). It is the nearest
 * ancestor holding resources/models/knob-fmnist.onnx (the shipped model), found once.
 */
let root: string | null = null;

function resourcesRoot(): string {
  if (root !== null) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 8; depth++) {
    if (existsSync(join(dir, 'resources', 'models', 'knob-fmnist.onnx'))) return (root = join(dir, 'resources'));
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`Knob Studio's resources folder was not found above ${fileURLToPath(import.meta.url)}`);
}

export function resourcePath(...segments: string[]): string {
  return join(resourcesRoot(), ...segments);
}
