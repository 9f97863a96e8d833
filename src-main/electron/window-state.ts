import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeOutputFile } from '../core/files/output-files';

/**
 * The window's size and position, remembered between runs in the app's data folder
 * (window-state.json). What is read back is trusted only as far as it is sane: whole numbers, at
 * least the window's minimum size, and at least a corner's worth of it on a display that is still
 * attached (a monitor unplugged since must not leave the window off screen).
 */
export interface WindowBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  bounds: WindowBounds;
  maximized: boolean;
}

export const WINDOW_STATE_FILE = 'window-state.json';
/** How much of the window (px, each way) must lie on a display for the saved place to be used. */
const VISIBLE_PX = 64;

/** The saved state if it is sane for these displays' work areas, else null (the default place). */
export function usableWindowState(
  raw: unknown,
  displays: WindowBounds[],
  minimum: { width: number; height: number },
): WindowState | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { bounds, maximized } = raw as { bounds?: Partial<WindowBounds>; maximized?: unknown };
  if (typeof bounds !== 'object' || bounds === null) return null;
  const { x, y, width, height } = bounds;
  const whole = [x, y, width, height].every((v) => Number.isSafeInteger(v));
  if (!whole || width! < minimum.width || height! < minimum.height) return null;
  const visible = displays.some(
    (area) =>
      Math.min(x! + width!, area.x + area.width) - Math.max(x!, area.x) >= VISIBLE_PX &&
      Math.min(y! + height!, area.y + area.height) - Math.max(y!, area.y) >= VISIBLE_PX,
  );
  if (!visible) return null;
  return { bounds: { x: x!, y: y!, width: width!, height: height! }, maximized: maximized === true };
}

export async function readWindowState(folder: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(join(folder, WINDOW_STATE_FILE), 'utf8')) as unknown;
  } catch {
    return null; // none yet, or unreadable: the default place
  }
}

export async function writeWindowState(folder: string, state: WindowState): Promise<void> {
  await writeOutputFile(join(folder, WINDOW_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
}
