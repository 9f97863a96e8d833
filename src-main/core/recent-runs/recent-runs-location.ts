import { join } from 'node:path';
import envPaths from 'env-paths';

/**
 * Where recent runs are kept when the host does not say (browser mode): KNOB_DATA_DIR when set,
 * else the OS data folder (env-paths: $XDG_DATA_HOME/knob-studio on Linux, ~/Library/Application
 * Support/knob-studio on macOS, %LOCALAPPDATA%\knob-studio\Data on Windows), in 'recent-runs'. The
 * Electron shell passes its userData path instead.
 */
export function defaultRecentRunsFolder(): string {
  return join(process.env.KNOB_DATA_DIR || envPaths('knob-studio', { suffix: '' }).data, 'recent-runs');
}
