import { existsSync, statSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { KnobError } from '../../../src-shared/errors';
import { GateSettingsSchema, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { describeIssues } from '../../../src-shared/zod-issues';

/**
 * knob-settings.json, the one module that reads and writes it: the exported knob settings (until
 * the tuned-calibrator bundle replaces it), format 1:
 *   { format: 'knob-settings', formatVersion, gate, model, exportedAt }.
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
  /** The model the settings were tuned with (its path or paths), when known. */
  model: string | null;
}

/** Writes the settings file into a folder; returns its path. */
export async function writeSettingsFile(
  dir: string,
  settings: { gate: GateSettings; model: string | null },
): Promise<string> {
  const path = join(dir, SETTINGS_FILE_NAME);
  const content = {
    format: 'knob-settings',
    formatVersion: SETTINGS_FORMAT_VERSION,
    gate: settings.gate,
    model: settings.model,
    exportedAt: new Date().toISOString(),
  } satisfies z.input<typeof SettingsFileSchema>;
  await writeFile(path, `${JSON.stringify(content, null, 1)}\n`);
  return path;
}

/** Reads a settings file, or the one inside an exported folder; typed errors name the file, never quote it. */
export async function readSettingsFile(path: string): Promise<SettingsFile> {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, SETTINGS_FILE_NAME) : path;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The parser's message quotes the text around the error: never shown (the file may hold secrets).
    throw new KnobError('INVALID_INPUT', `${file}: not a Knob settings file (not valid JSON)`);
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
    throw new KnobError('INVALID_INPUT', `${file}: not a Knob settings file (${describeIssues(parsed.error.issues)})`);
  return { path: file, gate: parsed.data.gate, model: parsed.data.model };
}
