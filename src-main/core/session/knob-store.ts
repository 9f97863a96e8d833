import type { Knobs } from '../../../src-shared/api/contract';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import {
  calibratorFeatureWidth,
  checkCalibratorFor,
  compileCalibrator,
  describeCalibrator,
  type Calibrator,
  type CalibratorSpec,
} from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import { DEFAULT_GATE_SETTINGS, parseGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Logger } from '../logging/logger';

/** What a calibrator is checked against: the loaded model, and the current recording's features (if any). */
export interface CalibratorTarget {
  model: ModelDescription | null;
  /** Null without a current recording; then `featureWidth` is null too. */
  recording: { featureWidth: number | null } | null;
}

export type KnobsListener = (knobs: Knobs, calibrator: Calibrator | null) => void;

/**
 * The operator's knobs: the gate settings and the output calibrator, with one version number that
 * every view computed from them carries (a view whose version is not the current one is stale).
 * Each change is validated whole before it applies, then told to every listener (the session
 * forwards it to the live pipeline and the recording's rolling figures) and to the API's
 * `knobs.changed` event. The calibrator is kept compiled, ready to apply per frame.
 */
export class KnobStore {
  private knobs: Knobs = { gate: DEFAULT_GATE_SETTINGS, calibrator: null, calibratorModel: null, version: 0 };
  private compiled: Calibrator | null = null;
  private readonly listeners: KnobsListener[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly announce: (knobs: Knobs) => void,
  ) {}

  get current(): Knobs {
    return this.knobs;
  }

  /** knobs.calibrator made ready to apply (null: none). */
  get calibrator(): Calibrator | null {
    return this.compiled;
  }

  onChange(listener: KnobsListener): void {
    this.listeners.push(listener);
  }

  /** Validates the merged setting as a whole (ranges and combinations), then applies it between frames. */
  setGate(patch: Partial<GateSettings>): Knobs {
    return this.applyGate(parseGateSettings({ ...this.knobs.gate, ...patch }));
  }

  applyGate(gate: GateSettings): Knobs {
    return this.commit({ ...this.knobs, gate });
  }

  /**
   * The output calibrator every view applies after fusion (null: none), checked against the model's
   * classes and, for a calibrator that reads features, against the recording's feature width.
   * `fittedOn` is the model it belongs to (its files' SHA-256): by default the loaded one (a
   * calibrator fitted in the desk, on this model's recording); an import names its own.
   */
  setCalibrator(spec: CalibratorSpec | null, target: CalibratorTarget, fittedOn?: string[]): Knobs {
    const model = spec === null ? null : requireModel(target.model);
    if (spec !== null) checkCalibratorFor(spec, model!.classCount);
    const featureWidth = spec === null ? null : calibratorFeatureWidth(spec);
    if (featureWidth !== null) {
      const width = target.recording?.featureWidth ?? null;
      if (width === null)
        throw new KnobError(
          'NOT_AVAILABLE',
          `${describeCalibrator(spec!)} reads the model's features of every frame, which this recording does not keep: open the source with "record features", or load a trace recorded with them (knob run --record-features)`,
        );
      if (width !== featureWidth)
        throw new KnobError(
          'INVALID_SETTINGS',
          `the calibrator was fitted on ${featureWidth} features per frame; this recording has ${width}`,
        );
    }
    this.compiled = spec === null ? null : compileCalibrator(spec);
    this.logger.info(
      { calibrator: spec === null ? null : describeCalibrator(spec) },
      spec === null ? 'output calibrator off' : 'output calibrator applied',
    );
    return this.commit({
      ...this.knobs,
      calibrator: spec,
      calibratorModel: spec === null ? null : (fittedOn ?? model!.sha256),
    });
  }

  /**
   * An imported setting as a whole: its calibrator (or none) replaces the current one, checked
   * against the loaded model before anything applies, so a calibrator for another model changes nothing.
   */
  applyImported(
    gate: GateSettings,
    calibrator: CalibratorSpec | null,
    target: CalibratorTarget,
    fittedOn?: string[],
  ): Knobs {
    if (calibrator !== null) checkCalibratorFor(calibrator, requireModel(target.model).classCount);
    this.applyGate(gate);
    return this.setCalibrator(calibrator, target, fittedOn);
  }

  /**
   * The calibrator for a recording about to become current: one that reads the model's features is
   * switched off (a new version, logged with `why`) when the recording cannot feed it, so no view
   * has to refuse it frame by frame.
   */
  calibratorFor(featureWidth: number | null, why: string): Calibrator | null {
    const width = this.compiled?.featureWidth ?? null;
    if (width !== null && featureWidth !== width) {
      this.logger.info({ calibrator: describeCalibrator(this.compiled!.spec) }, `output calibrator off: ${why}`);
      this.setCalibrator(null, { model: null, recording: null });
    }
    return this.compiled;
  }

  private commit(next: Omit<Knobs, 'version'>): Knobs {
    this.knobs = { ...next, version: this.knobs.version + 1 };
    for (const listener of this.listeners) listener(this.knobs, this.compiled);
    this.announce(this.knobs);
    return this.knobs;
  }
}

function requireModel(model: ModelDescription | null): ModelDescription {
  if (model === null) throw new KnobError('NOT_AVAILABLE', 'no model is loaded (model.load first)');
  return model;
}
