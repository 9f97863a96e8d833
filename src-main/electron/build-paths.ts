import { fileURLToPath } from 'node:url';

/**
 * Where the shell finds the preload bundle and the built renderer, from the main module's own URL:
 * beside it in the build (out/main/index.js -> out/preload, out/renderer; the same inside a packaged
 * app.asar), or in the repository's out/ when the main module runs from its sources (the shell's
 * tests). Never from the environment: a packaged app must not be pointed at other files.
 */
export function shellPaths(mainModuleUrl: string): { preload: string; rendererDir: string } {
  const fromSources = fileURLToPath(mainModuleUrl).endsWith('.ts');
  const out = fromSources ? '../../out/' : '../';
  return {
    preload: fileURLToPath(new URL(`${out}preload/index.cjs`, mainModuleUrl)),
    rendererDir: fileURLToPath(new URL(`${out}renderer/`, mainModuleUrl)),
  };
}
