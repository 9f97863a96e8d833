import type { RecentRun } from '../../src-shared/api/recent-runs';

/** When a run was kept, as the desk writes a time (day/month/year, 24 h). */
export function keptTime(keptAt: string): string {
  return new Date(keptAt).toLocaleString('en-GB', { hour12: false });
}

/** What the desk calls a run: its name, else when it was kept. */
export function runLabel(run: Pick<RecentRun, 'name' | 'keptAt'>): string {
  return run.name !== '' ? run.name : keptTime(run.keptAt);
}
