import envPaths from 'env-paths';

/**
 * Where the backend logs when the host does not say (browser mode, the CLI): KNOB_LOG_DIR when set,
 * else the OS state folder for logs (env-paths: $XDG_STATE_HOME/knob-studio on Linux,
 * ~/Library/Logs/knob-studio on macOS, %LOCALAPPDATA%\knob-studio\Log on Windows). The Electron
 * shell passes its own logs path instead.
 */
export function defaultLogDirectory(): string {
  return process.env.KNOB_LOG_DIR || envPaths('knob-studio', { suffix: '' }).log;
}
