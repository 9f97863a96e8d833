import { join } from 'node:path';
import { defaultDataFolder } from '../files/data-folder';

/** Where recent runs are kept when the host does not say: 'recent-runs' in the data folder (data-folder.ts). */
export function defaultRecentRunsFolder(): string {
  return join(defaultDataFolder(), 'recent-runs');
}
