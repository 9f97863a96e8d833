import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The app's resources/ folder, wherever the code runs from: the sources (src-main/core/...), the
 * electron-vite build (out/main/...) or a packaged app, whose code is in
 * <resources>/app.asar/out/main and whose model and data are extra resources in
 * <resources>/resources (electron-builder.yml). It is the nearest folder named resources/ holding
 * models/knob-fmnist.onnx (the shipped model) in or above the code's folder, found once.
 */
let root: string | null = null;

/** The resources folder for code in `startDirectory` (resourcesRoot's search, for any start). */
export function resourcesRootFrom(startDirectory: string): string {
  let dir = startDirectory;
  for (let depth = 0; depth < 8; depth++) {
    if (existsSync(join(dir, 'resources', 'models', 'knob-fmnist.onnx'))) return join(dir, 'resources');
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`Knob Studio's resources folder was not found above ${startDirectory}`);
}

function resourcesRoot(): string {
  return (root ??= resourcesRootFrom(dirname(fileURLToPath(import.meta.url))));
}

export function resourcePath(...segments: string[]): string {
  return join(resourcesRoot(), ...segments);
}
