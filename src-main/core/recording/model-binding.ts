import type { ModelDescription } from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import type { StoredProvenance } from '../report/provenance';

/**
 * What belongs to one model (issue 27): a recording (its provenance), a calibrator and a tuned
 * setting (the knobs and settings files) carry the SHA-256 of the model files they were made with,
 * and these rules, the same for the desk and the command line, refuse crossing them. A calibrator
 * fitted on model A and applied to model B's logits is a silently wrong number.
 */
type ModelIdentity = Pick<ModelDescription, 'paths' | 'sha256'>;

export function sameModel(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((hash, i) => hash === b[i]);
}

/** `name (SHA-256 0123456789ab...)`, how refusals name a model. */
export function describeModelHash(sha256: readonly string[], paths?: readonly string[]): string {
  const hash = `SHA-256 ${sha256.map((h) => `${h.slice(0, 12)}...`).join(' + ')}`;
  return paths === undefined ? hash : `${paths.join(' + ')}, ${hash}`;
}

/** A bundle is built from a trace of the model it deploys, or refused (a trace without a recorded model passes). */
export function checkTraceRecordedWith(
  traceName: string,
  recorded: StoredProvenance | null,
  model: ModelIdentity,
): void {
  const made = recorded?.model ?? null;
  if (made !== null && !sameModel(made.sha256, model.sha256))
    throw new KnobError(
      'INVALID_INPUT',
      `${traceName}: recorded with another model (${describeModelHash(made.sha256, made.paths)}), not ${describeModelHash(model.sha256, model.paths)}`,
    );
}

/**
 * A settings file (gate settings and calibrator) tuned with another model is refused unless the
 * caller was told to allow it (`override` says how); a file that names no model passes.
 */
export function checkSettingsModel(
  settingsPath: string,
  settingsModel: readonly string[] | null,
  model: ModelIdentity,
  allowed: boolean,
  override: string,
): void {
  if (settingsModel === null || allowed || sameModel(settingsModel, model.sha256)) return;
  throw new KnobError(
    'INVALID_INPUT',
    `${settingsPath}: tuned with another model (${describeModelHash(settingsModel)}), not ${describeModelHash(model.sha256, model.paths)}; ${override}`,
  );
}
