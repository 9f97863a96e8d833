import { isAbsolute, resolve } from 'node:path';

/**
 * The files and folders a command line asks the app to open: its arguments that are not switches
 * (Chromium and Electron add their own), resolved against the launch's working folder, that exist,
 * and that are not the app itself (`electron .` in development passes the app's folder).
 */
export function filesToOpen(
  args: string[],
  workingDirectory: string,
  exists: (path: string) => boolean,
  appPath: string,
): string[] {
  return args
    .filter((arg) => arg !== '' && !arg.startsWith('-'))
    .map((arg) => (isAbsolute(arg) ? arg : resolve(workingDirectory, arg)))
    .filter((path) => path !== resolve(appPath) && exists(path));
}
