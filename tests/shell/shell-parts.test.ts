/**
 * The shell's pure parts: which command-line arguments are files to open; whether a saved window
 * place is still usable (sane numbers, on a display still attached); the application menu's
 * template in development and packaged, on macOS and elsewhere; the About text.
 */
import { describe, expect, it } from 'vitest';
import { aboutText, appMenuTemplate, MENU_RECENT_RUNS, type MenuActions } from '../../src-main/electron/app-menu';
import { filesToOpen } from '../../src-main/electron/files-to-open';
import { usableWindowState } from '../../src-main/electron/window-state';

describe('filesToOpen', () => {
  const existing = new Set(['/home/u/a.onnx', '/home/u/data', '/app', '/abs/clip.mp4']);
  it('keeps existing files and folders, resolved against the launch folder; drops switches and the app', () => {
    expect(
      filesToOpen(
        ['.', 'a.onnx', 'data', '--inspect', '-x', '', 'missing.onnx', '/abs/clip.mp4'],
        '/home/u',
        (p) => existing.has(p),
        '/home/u',
      ),
    ).toEqual(['/home/u/a.onnx', '/home/u/data', '/abs/clip.mp4']);
    expect(filesToOpen(['/app'], '/', (p) => existing.has(p), '/app')).toEqual([]);
    // a Linux desktop entry's %U: file:// URIs, percent-encoded
    expect(
      filesToOpen(
        ['file:///abs/clip.mp4', 'file://other-host/x', 'file:///home/u/a%2Eonnx'],
        '/',
        (p) => existing.has(p),
        '/app',
      ),
    ).toEqual(['/abs/clip.mp4', '/home/u/a.onnx']);
  });
});

describe('usableWindowState', () => {
  const displays = [{ x: 0, y: 0, width: 1920, height: 1080 }];
  const minimum = { width: 1024, height: 700 };
  const saved = (bounds: Record<string, unknown>, maximized: unknown = false) => ({ bounds, maximized });
  it('takes a sane place on an attached display', () => {
    expect(usableWindowState(saved({ x: 10, y: 20, width: 1200, height: 800 }, true), displays, minimum)).toEqual({
      bounds: { x: 10, y: 20, width: 1200, height: 800 },
      maximized: true,
    });
    // mostly off to the right, but a corner still on screen
    expect(usableWindowState(saved({ x: 1800, y: 900, width: 1200, height: 800 }), displays, minimum)).not.toBeNull();
  });
  it('refuses what would put the window off screen, too small, or is not numbers', () => {
    const refused = [
      null,
      'x',
      { bounds: null },
      saved({ x: 2500, y: 0, width: 1200, height: 800 }), // a display since unplugged
      saved({ x: -5000, y: -5000, width: 1200, height: 800 }),
      saved({ x: 0, y: 0, width: 300, height: 200 }),
      saved({ x: 0.5, y: 0, width: 1200, height: 800 }),
      saved({ x: '0', y: 0, width: 1200, height: 800 }),
      saved({ x: 0, y: 0, width: Infinity, height: 800 }),
      saved({ y: 0, width: 1200, height: 800 }),
    ];
    for (const raw of refused) expect(usableWindowState(raw, displays, minimum), JSON.stringify(raw)).toBeNull();
  });
});

describe('appMenuTemplate', () => {
  const calls: string[] = [];
  const actions: MenuActions = {
    open: (purposes) => calls.push(`open ${purposes.join('+')}`),
    exportBundle: () => calls.push('export'),
    openRun: (id) => calls.push(`run ${id}`),
    openLogFolder: () => calls.push('logs'),
    showAbout: () => calls.push('about'),
  };
  const roles = (items: unknown) => (items as Array<{ role?: string }>).map((item) => item.role).filter(Boolean);
  const runs = Array.from({ length: 14 }, (_, i) => ({ id: `run-${i}`, label: `run ${i}` }));

  it('packaged: no reload and no developer tools; development: both', () => {
    const packaged = appMenuTemplate({ development: false, isMac: false, recentRuns: [], actions });
    const view = packaged.find((item) => item.label === '&View')!;
    expect(roles(view.submenu)).not.toContain('toggleDevTools');
    expect(roles(view.submenu)).not.toContain('reload');
    const development = appMenuTemplate({ development: true, isMac: false, recentRuns: [], actions });
    expect(roles(development.find((item) => item.label === '&View')!.submenu)).toEqual(
      expect.arrayContaining(['reload', 'forceReload', 'toggleDevTools']),
    );
  });

  it('recent runs: the newest ten, each reopening its run; none says so', () => {
    const file = (recentRuns: typeof runs) =>
      appMenuTemplate({ development: false, isMac: false, recentRuns, actions })[0]!.submenu as Array<{
        label?: string;
        submenu?: Array<{ label: string; enabled?: boolean; click?: () => void }>;
      }>;
    const recent = file(runs).find((item) => item.label === 'Recent Runs')!.submenu!;
    expect(recent).toHaveLength(MENU_RECENT_RUNS);
    recent[2]!.click!();
    expect(calls.at(-1)).toBe('run run-2');
    expect(file([]).find((item) => item.label === 'Recent Runs')!.submenu).toEqual([
      { label: 'No recent runs', enabled: false },
    ]);
  });

  it('macOS gets the app menu and Close; elsewhere Quit', () => {
    const mac = appMenuTemplate({ development: false, isMac: true, recentRuns: [], actions });
    expect(mac[0]).toEqual({ role: 'appMenu' });
    expect(roles(mac[1]!.submenu)).toContain('close');
    const linux = appMenuTemplate({ development: false, isMac: false, recentRuns: [], actions });
    expect(roles(linux[0]!.submenu)).toContain('quit');
  });

  it('About lists the versions it has', () => {
    expect(aboutText({ Electron: '45.5.0', Chromium: undefined, Node: '24.1.0' })).toBe('Electron 45.5.0\nNode 24.1.0');
  });
});
