import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { KnobError } from '../../../src-shared/errors';
import { GateSettingsSchema, type GateSettings } from '../../../src-shared/gate/gate-settings';

/**
 * knob-settings.json: the exported knob settings (until the tuned-calibrator bundle replaces it),
 * format 1: { format: 'knob-settings', formatVersion, gate, model, exportedAt }.
 */
export const SETTINGS_FILE_NAME = 'knob-settings.json';
export const SETTINGS_FORMAT_VERSION = 1;

const SettingsFileSchema = z.object({
  format: z.literal('knob-settings'),
  formatVersion: z.number().int().positive(),
  gate: GateSettingsSchema,
  model: z.string().nullable(),
  exportedAt: z.string().optional(),
});

export interface SettingsFile {
  path: string;
  gate: GateSettings;
  model: string | null;
}

/** Reads a settings file, or the one inside an exported folder; typed errors name the file. */
export async function readSettingsFile(path: string): Promise<SettingsFile> {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, SETTINGS_FILE_NAME) : path;
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: ${code ? `cannot be read (${code})` : `not valid JSON (${(error as Error).message})`}`,
    );
  }
  const version = (raw as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === 'number' && version > SETTINGS_FORMAT_VERSION) {
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: settings format version ${version} is newer than this app reads (${SETTINGS_FORMAT_VERSION})`,
    );
  }
  const parsed = SettingsFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: not a Knob settings file (${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')})`,
    );
  return { path: file, gate: parsed.data.gate, model: parsed.data.model };
}
