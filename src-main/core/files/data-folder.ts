import envPaths from 'env-paths';

/**
 * The app's data folder when the host does not name one (browser mode, the command line):
 * KNOB_DATA_DIR when set, else the OS data folder (env-paths: $XDG_DATA_HOME/knob-studio on Linux,
 * ~/Library/Application Support/knob-studio on macOS, %LOCALAPPDATA%\knob-studio\Data on Windows).
 * The Electron shell passes its userData path instead. Recent runs and the feature cache live in it.
 */
export function defaultDataFolder(): string {
  return process.env.KNOB_DATA_DIR || envPaths('knob-studio', { suffix: '' }).data;
}
