import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The files and folders a command line asks the app to open: its arguments that are not switches
 * (Chromium and Electron add their own), resolved against the launch's working folder, that exist,
 * and that are not the app itself (`electron .` in development passes the app's folder). Linux
 * desktop entries pass file:// URIs (%U): those are read as the paths they name.
 */
export function filesToOpen(
  args: string[],
  workingDirectory: string,
  exists: (path: string) => boolean,
  appPath: string,
): string[] {
  return args
    .filter((arg) => arg !== '' && !arg.startsWith('-'))
    .map((arg) => (arg.startsWith('file://') ? safeFilePath(arg) : arg))
    .filter((arg): arg is string => arg !== null)
    .map((arg) => (isAbsolute(arg) ? arg : resolve(workingDirectory, arg)))
    .filter((path) => path !== resolve(appPath) && exists(path));
}

function safeFilePath(url: string): string | null {
  try {
    return fileURLToPath(url);
  } catch {
    return null; // a file URL of another host, or malformed
  }
}
