import type { MenuItemConstructorOptions } from 'electron';
import type { FileDialogPurpose } from '../../src-shared/api/bridge';

/**
 * The application menu, as a template (Menu.buildFromTemplate takes it): File (open a model, a
 * source, a trace; import and export a bundle; recent runs; quit), Edit (the standard roles, which
 * text fields need on macOS), View (reload and developer tools only in development; zoom, full
 * screen), Help (the log folder, About with the versions). What each item does is the caller's.
 */
export interface MenuActions {
  open(purposes: FileDialogPurpose[]): void;
  exportBundle(): void;
  openRun(id: string): void;
  openLogFolder(): void;
  showAbout(): void;
}

export interface MenuOptions {
  /** Development (not packaged): reload and developer tools are offered. */
  development: boolean;
  isMac: boolean;
  /** Newest first: id and what to call it. */
  recentRuns: Array<{ id: string; label: string }>;
  actions: MenuActions;
}

/** The most recent runs the File menu lists. */
export const MENU_RECENT_RUNS = 10;

export function appMenuTemplate(options: MenuOptions): MenuItemConstructorOptions[] {
  const { actions } = options;
  const recent: MenuItemConstructorOptions[] =
    options.recentRuns.length === 0
      ? [{ label: 'No recent runs', enabled: false }]
      : options.recentRuns
          .slice(0, MENU_RECENT_RUNS)
          .map((run) => ({ label: run.label, click: () => actions.openRun(run.id) }));
  const view: MenuItemConstructorOptions[] = [
    ...(options.development
      ? ([{ role: 'reload' }, { role: 'forceReload' }, { role: 'toggleDevTools' }, { type: 'separator' }] as const)
      : []),
    { role: 'resetZoom' },
    { role: 'zoomIn' },
    { role: 'zoomOut' },
    { type: 'separator' },
    { role: 'togglefullscreen' },
  ];
  return [
    ...(options.isMac ? [{ role: 'appMenu' } as const] : []),
    {
      label: '&File',
      submenu: [
        { label: 'Open Model…', accelerator: 'CmdOrCtrl+O', click: () => actions.open(['model']) },
        { label: 'Open Source…', accelerator: 'CmdOrCtrl+Shift+O', click: () => actions.open(['dataset', 'video']) },
        { label: 'Open Trace…', click: () => actions.open(['trace']) },
        { type: 'separator' },
        { label: 'Import Bundle or Settings…', accelerator: 'CmdOrCtrl+I', click: () => actions.open(['settings']) },
        { label: 'Export Bundle…', accelerator: 'CmdOrCtrl+E', click: () => actions.exportBundle() },
        { type: 'separator' },
        { label: 'Recent Runs', submenu: recent },
        { type: 'separator' },
        options.isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    { label: '&View', submenu: view },
    {
      role: 'help',
      submenu: [
        { label: 'Open Log Folder', click: () => actions.openLogFolder() },
        { type: 'separator' },
        { label: 'About Knob Studio', click: () => actions.showAbout() },
      ],
    },
  ];
}

/** About's text: the app's and its runtimes' versions. */
export function aboutText(versions: Record<string, string | undefined>): string {
  return Object.entries(versions)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, version]) => `${name} ${version}`)
    .join('\n');
}
