import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
};

/**
 * Resolves a URL path to a file inside `rootDir`, or null when it would leave the folder or does
 * not exist. "/" is index.html.
 */
export async function resolveStaticFile(
  rootDir: string,
  urlPath: string,
): Promise<{ path: string; contentType: string } | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const relative = normalize(decoded === '/' ? '/index.html' : decoded).replace(/^([/\\])+/, '');
  const path = join(rootDir, relative);
  if (path !== rootDir && !path.startsWith(rootDir.endsWith(sep) ? rootDir : rootDir + sep)) return null;
  try {
    if (!(await stat(path)).isFile()) return null;
  } catch {
    return null;
  }
  return { path, contentType: CONTENT_TYPES[extname(path)] ?? 'application/octet-stream' };
}

export async function readStaticFile(path: string): Promise<Buffer> {
  return readFile(path);
}
