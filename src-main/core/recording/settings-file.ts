import { join } from 'node:path';
import { z } from 'zod';
import { CalibratorSpecSchema, type CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { KnobError } from '../../../src-shared/errors';
import { GateSettingsSchema, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { parseJsonText } from '../../../src-shared/json-text';
import { checkTextField } from '../files/text-fields';
import { describeIssues } from '../../../src-shared/zod-issues';
import { formatBytes, inputLimit } from '../files/input-limits';
import type { OutputFile } from '../files/output-files';
import { isUserFolder, readUserText } from '../files/user-files';

import { creationTime } from '../report/creation-time';
/**
 * knob-settings.json, the one module that reads and writes it: the exported knob settings (until
 * the tuned-calibrator bundle replaces it), format 1:
 *   { format: 'knob-settings', formatVersion, gate, model, modelSha256?, calibrator?, exportedAt }
 * `calibrator` (optional, null for none) is the output calibrator applied after fusion.
 */
export const SETTINGS_FILE_NAME = 'knob-settings.json';
export const SETTINGS_FORMAT_VERSION = 1;

const SettingsFileSchema = z.object({
  format: z.literal('knob-settings'),
  formatVersion: z.number().int().positive(),
  gate: GateSettingsSchema,
  model: z.string().nullable(),
  /** The SHA-256 of each model file the settings were tuned with (absent in files from before issue 27). */
  modelSha256: z
    .array(z.string().regex(/^[0-9a-f]{64}$/u))
    .min(1)
    .max(2)
    .nullable()
    .optional(),
  calibrator: CalibratorSpecSchema.nullable().optional(),
  exportedAt: z.string().optional(),
});

export interface SettingsFile {
  path: string;
  gate: GateSettings;
  /** The model the settings were tuned with (its path or paths), when known. */
  model: string | null;
  /** Its files' SHA-256, when known: the settings belong to that model (model-binding.ts). */
  modelSha256: string[] | null;
  /** The output calibrator applied after fusion; null for none. */
  calibrator: CalibratorSpec | null;
}

/** The settings file's name and content, written with the other outputs of an export. */
export function settingsFile(settings: {
  gate: GateSettings;
  model: string | null;
  modelSha256: string[] | null;
  calibrator?: CalibratorSpec | null;
}): OutputFile & { data: string } {
  const content = {
    format: 'knob-settings',
    formatVersion: SETTINGS_FORMAT_VERSION,
    gate: settings.gate,
    model: settings.model,
    modelSha256: settings.modelSha256,
    calibrator: settings.calibrator ?? null,
    exportedAt: creationTime().toISOString(),
  } satisfies z.input<typeof SettingsFileSchema>;
  const data = `${JSON.stringify(content, null, 1)}\n`;
  // never write a file that readSettingsFile would refuse (a large feature bank or isotonic map)
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes > inputLimit('settings'))
    throw new KnobError(
      'INVALID_INPUT',
      `the settings file would be ${formatBytes(bytes)}, over the settings limit of ${formatBytes(inputLimit('settings'))} that reading it applies (raise it with --input-limit settings=SIZE or KNOB_INPUT_LIMITS)`,
    );
  return { name: SETTINGS_FILE_NAME, data };
}

/** Reads a settings file, or the one inside an exported folder; typed errors name the file, never quote it. */
export async function readSettingsFile(path: string): Promise<SettingsFile> {
  const file = (await isUserFolder(path)) ? join(path, SETTINGS_FILE_NAME) : path;
  const text = await readUserText(file, 'settings');
  let raw: unknown;
  try {
    raw = parseJsonText(text, file);
  } catch (error) {
    const problem = (error as Error).message.replace(`${file}: `, '');
    throw new KnobError('INVALID_INPUT', `${file}: not a Knob settings file (${problem})`);
  }
  const version = (raw as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === 'number' && version > SETTINGS_FORMAT_VERSION) {
    throw new KnobError(
      'INVALID_INPUT',
      `${file}: settings format version ${version} is newer than this app reads (${SETTINGS_FORMAT_VERSION})`,
    );
  }
  const model = (raw as { model?: unknown } | null)?.model;
  if (typeof model === 'string') checkTextField(model, file, 'the settings.model');
  const parsed = SettingsFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new KnobError('INVALID_INPUT', `${file}: not a Knob settings file (${describeIssues(parsed.error.issues)})`);
  }
  return {
    path: file,
    gate: parsed.data.gate,
    model: parsed.data.model,
    modelSha256: parsed.data.modelSha256 ?? null,
    calibrator: parsed.data.calibrator ?? null,
  };
}
