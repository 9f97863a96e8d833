import type { GateSettings } from '../gate/gate-settings';
import { createGateState, invalidateCoefficients, resetGateState, type GateState } from '../gate/gate-state';
import { runGate } from '../gate/gate-kernel';
import { checkFeaturesFor, type Calibrator } from '../calibrators/output-calibrator';
import {
  appliedCondition,
  createConditionHysteresis,
  resetConditionHysteresis,
} from '../calibrators/condition-hysteresis';
import { fuseRowInto, fuseTop1Into } from '../fusion/convex-fusion';
import { argmaxRow } from '../fusion/logits';
import { KnobError } from '../errors';
import { keptClassTopLabelInto } from './kept-class-scores';
import { validateTrace, type Trace } from './trace';

/** Per-frame results of running the gate and the fusion over a trace. */
export interface ReplayOutput {
  /** Gate state g (unclamped; the fusion reads clamp(g, 0, 1)). */
  g: Float64Array;
  /** Gate velocity v in 1/s. */
  v: Float64Array;
  /** Top-1 class of the output (the fused logits, calibrated when a calibrator is set). */
  top1: Int32Array;
  /** Probability of the output's top-1 class. */
  confidence: Float64Array;
  /**
   * The output as logits, row-major, when asked for (10x the memory of the rest): the fused
   * logits, or with a calibrator their calibrated log-probabilities.
   */
  fusedLogits: Float64Array | null;
  /** Version of the settings each frame was computed with. */
  settingsVersion: Uint32Array;
  /** How many u* values were outside [0, 1] and clamped. */
  clampedInputs: number;
}

export interface ReplayOptions {
  keepFusedLogits?: boolean;
  /**
   * Where the kept fused logits go (its first n x K values), instead of a new array: a buffer the
   * caller keeps between replays, so a knob turn on a long recording does not fault in fresh pages.
   */
  fusedLogitsInto?: Float64Array;
  /**
   * false: the output's confidence is left at 0 for the caller to fill (no exp per class here): a
   * caller that scores every frame's kept fused logits next takes it from the top-label pairs,
   * the same 1 / sum_k exp(z_k - max z) (view-replay.ts). Needs keepFusedLogits and no calibrator.
   */
  confidence?: boolean;
  settingsVersion?: number;
  /** The output calibrator applied after fusion (none: the fused output as it is). */
  calibrator?: Calibrator | null;
  /**
   * 'kept classes too': a kept-class trace replays (its top-1 and confidence the kept-class
   * estimates, GateReplayer.advance); by default it is refused, as everywhere that needs every class.
   */
  logits?: 'every class' | 'kept classes too';
}

export function allocateReplayOutput(
  frameCapacity: number,
  classCount: number,
  keepFusedLogits: boolean,
): ReplayOutput {
  return {
    g: new Float64Array(frameCapacity),
    v: new Float64Array(frameCapacity),
    top1: new Int32Array(frameCapacity),
    confidence: new Float64Array(frameCapacity),
    fusedLogits: keepFusedLogits ? new Float64Array(frameCapacity * classCount) : null,
    settingsVersion: new Uint32Array(frameCapacity),
    clampedInputs: 0,
  };
}

/**
 * Runs the gate and the fusion frame by frame. Batch replay and live stepping are the same object:
 * replay() advances over the whole trace at once, a live stream advances one frame at a time as
 * frames arrive; both call runGate and the same fusion code, so their outputs are bit-identical.
 */
export class GateReplayer {
  readonly state: GateState;
  /** Whether advance() computes the output's confidence (ReplayOptions.confidence). */
  withConfidence = true;
  private settings: GateSettings;
  private version: number;
  private scratch: Float64Array = new Float64Array(0);
  private calibrated: Float64Array = new Float64Array(0);
  private calibratorScratch: Float64Array = new Float64Array(0);
  private calibrator: Calibrator | null;
  /** A condition-aware calibrator's hysteresis over the stream (continuous mode), reset with the gate. */
  private readonly conditionState = createConditionHysteresis();

  constructor(settings: GateSettings, settingsVersion = 0, calibrator: Calibrator | null = null) {
    this.settings = settings;
    this.version = settingsVersion;
    this.calibrator = calibrator;
    this.state = createGateState(settings.g0);
  }

  /** The output calibrator for the frames from now on (null: none); its conditions start afresh. */
  setCalibrator(calibrator: Calibrator | null): void {
    if (calibrator !== this.calibrator) {
      resetConditionHysteresis(this.conditionState);
      this.lastCondition = -1;
    }
    this.calibrator = calibrator;
  }

  /**
   * The condition a condition-aware calibrator applied to the last frame advanced (an index into
   * its `condition.names`; -1 before any). In reset mode each frame's own detected condition.
   */
  get appliedCondition(): number {
    return this.lastCondition;
  }

  private lastCondition = -1;

  get currentSettings(): GateSettings {
    return this.settings;
  }

  get settingsVersion(): number {
    return this.version;
  }

  /** Retunes between frames: (g, v) are kept (bumpless); the next frame uses the new settings. */
  setSettings(settings: GateSettings, settingsVersion: number): void {
    // a stream judged frame by frame for a while carries no condition state back into continuous mode
    if (settings.mode !== this.settings.mode) resetConditionHysteresis(this.conditionState);
    this.settings = settings;
    this.version = settingsVersion;
    invalidateCoefficients(this.state);
  }

  /** Back to rest at g0 (stream start, or the operator's reset). */
  resetState(): void {
    resetGateState(this.state, this.settings.g0);
    resetConditionHysteresis(this.conditionState);
    this.lastCondition = -1;
  }

  /**
   * Processes frames [from, to) of `trace` into `out` (which must have room for them). A kept-class
   * trace's top-1 and confidence are its kept-class estimates (kept-class-scores.ts: the confidence
   * with the rest at its chord, exact at g = 0 and 1), with no calibrator (they need every class).
   */
  advance(trace: Trace, from: number, to: number, out: ReplayOutput): void {
    out.clampedInputs += runGate(this.settings, trace, from, to, this.state, out);
    const k = trace.classCount;
    if (trace.keptClasses !== undefined) {
      if (this.calibrator !== null || out.fusedLogits !== null)
        throw new KnobError(
          'INVALID_INPUT',
          'a kept-class trace has no full fused rows: output calibrators and fused logits need every class',
        );
      keptClassTopLabelInto(trace.keptClasses, out.g, from, to, out.top1, out.confidence);
      out.settingsVersion.fill(this.version, from, to);
      return;
    }
    if (this.scratch.length !== k) this.scratch = new Float64Array(k);
    if (this.calibrator !== null) {
      this.calibrateInto(trace, from, to, out);
      out.settingsVersion.fill(this.version, from, to);
      return;
    }
    fuseTop1Into(
      trace.zStatic,
      trace.zDyn,
      out.g,
      k,
      from,
      to,
      out.top1,
      this.withConfidence || out.fusedLogits === null ? out.confidence : null,
      out.fusedLogits,
      this.scratch,
    );
    out.settingsVersion.fill(this.version, from, to);
  }

  /** Fuse, then calibrate each frame (log-probabilities out), with its top-1 and confidence. */
  private calibrateInto(trace: Trace, from: number, to: number, out: ReplayOutput): void {
    const k = trace.classCount;
    const calibrator = this.calibrator!;
    if (this.calibrated.length !== k) {
      this.calibrated = new Float64Array(k);
      this.calibratorScratch = new Float64Array(k);
    }
    // density- and proximity-aware calibrators read each frame's features
    checkFeaturesFor(calibrator, trace.features ?? null);
    const features = trace.features?.values;
    const width = trace.features?.width ?? 0;
    // the hysteresis carries across frames where the gate does (condition-hysteresis.ts)
    const choice = calibrator.condition;
    const stream = this.settings.mode === 'continuous' ? this.conditionState : null;
    for (let i = from; i < to; i++) {
      fuseRowInto(trace.zStatic, trace.zDyn, i * k, k, out.g[i], this.scratch, 0);
      const condition = choice === undefined ? undefined : appliedCondition(choice, stream, features!, i * width);
      if (condition !== undefined) this.lastCondition = condition;
      calibrator.rowInto(
        this.scratch,
        0,
        k,
        this.calibrated,
        0,
        this.calibratorScratch,
        features,
        i * width,
        condition,
      );
      const best = argmaxRow(this.calibrated, 0, k);
      out.top1[i] = best;
      out.confidence[i] = Math.exp(this.calibrated[best]);
      if (out.fusedLogits !== null) out.fusedLogits.set(this.calibrated, i * k);
    }
  }
}

/**
 * The gate's trajectory alone (g, unclamped) over a whole validated trace from rest at g0, for a
 * caller that fuses in its own way (a row scorer, the fused-score tables): replay() without the
 * fusion, which at 1,000 classes costs far more than the gate.
 */
export function gateTrajectory(trace: Trace, settings: GateSettings): Float64Array {
  const n = trace.frameCount;
  const out = { g: new Float64Array(n), v: new Float64Array(n) };
  runGate(settings, trace, 0, n, createGateState(settings.g0), out);
  return out.g;
}

/** Replays a whole trace with one setting, from rest at g0. Validates the trace first. */
export function replay(trace: Trace, settings: GateSettings, options: ReplayOptions = {}): ReplayOutput {
  validateTrace(trace, options.logits);
  const into = options.fusedLogitsInto;
  const kept = (options.keepFusedLogits ?? false) && into === undefined;
  const out = allocateReplayOutput(trace.frameCount, trace.classCount, kept);
  if (options.keepFusedLogits === true && into !== undefined) {
    if (into.length < trace.frameCount * trace.classCount)
      throw new RangeError(`${into.length} values cannot hold ${trace.frameCount} x ${trace.classCount} fused logits`);
    out.fusedLogits = into.subarray(0, trace.frameCount * trace.classCount);
  }
  const replayer = new GateReplayer(settings, options.settingsVersion ?? 0, options.calibrator ?? null);
  replayer.withConfidence = options.confidence ?? true;
  replayer.advance(trace, 0, trace.frameCount, out);
  return out;
}
