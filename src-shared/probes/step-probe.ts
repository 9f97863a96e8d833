import { z } from 'zod';
import { CORRUPTION_NAMES } from '../corruptions/corruption-table';
import type { CorruptionSchedule } from '../corruptions/schedule';
import { KnobError } from '../errors';
import type { GateSettings } from '../gate/gate-settings';
import { identifySecondOrder, type IdentifiedSecondOrder } from '../gate/identify-second-order';
import {
  continuousResponseMetrics,
  discreteResponseMetrics,
  type DiscreteResponseMetrics,
  type ResponseMetrics,
} from '../gate/response-metrics';
import { summariseStepProbe, type StepProbeBand, type StepProbeSummary } from './step-probe-summary';
import { seededRandom } from '../random';
import { replay } from '../trace/replay';
import type { Trace } from '../trace/trace';
import { parseWithSchema } from '../zod-issues';
import { FrameRateHzSchema } from '../gate/accepted-ranges';

/**
 * The step probe (issue 17): R realisations of a severity step low -> high -> low of one corruption
 * over a labelled stream, each its own stretch of the source (a seeded offset) with its own
 * corruption seed, recorded once through the model. Everything else is a replay: the probe at any
 * knobs is the realisations' u* run through the gate at those knobs (`stepProbeAt`), so turning a
 * knob costs no model pass. The up-step at `framesPerLevel` is summarised over the window
 * [0, 2 framesPerLevel) (step-probe-summary.ts), beside the analytic and discrete predictions.
 */
export const StepProbePlanSchema = z.strictObject({
  corruption: z.enum(CORRUPTION_NAMES).default('shot_noise'),
  lowSeverity: z.number().min(0).max(5).default(1),
  highSeverity: z.number().min(0).max(5).default(5),
  /** Frames at each level: low, high, then low again (default 300, 10 s at 30 fps). */
  framesPerLevel: z.number().int().min(20).max(100_000).default(300),
  realisations: z.number().int().min(2).max(1024).default(32),
  frameRateHz: FrameRateHzSchema.default(30),
  seed: z.number().int().min(0).max(0xffffffff).default(0),
});
export type StepProbePlanInput = z.input<typeof StepProbePlanSchema>;
export type StepProbePlan = z.output<typeof StepProbePlanSchema>;

export function parseStepProbePlan(raw: unknown): StepProbePlan {
  const plan = parseWithSchema(StepProbePlanSchema, raw, {
    code: 'INVALID_SETTINGS',
    what: 'Invalid step probe',
    root: '(step probe)',
  });
  if (plan.lowSeverity === plan.highSeverity)
    throw new KnobError('INVALID_SETTINGS', 'Invalid step probe: highSeverity must differ from lowSeverity');
  return plan;
}

/** Frames each realisation records (three levels). */
export function stepProbeFrames(plan: StepProbePlan): number {
  return 3 * plan.framesPerLevel;
}

/** The plan in words, for the desk and the reports: "shot noise 1 → 5 → 1, 32 realisations of 900 frames at 30 fps". */
export function describeStepProbePlan(plan: StepProbePlan): string {
  return `${plan.corruption.replaceAll('_', ' ')} ${plan.lowSeverity} → ${plan.highSeverity} → ${plan.lowSeverity}, ${plan.realisations} realisations of ${stepProbeFrames(plan)} frames at ${plan.frameRateHz} fps`;
}

export function stepProbeSchedule(plan: StepProbePlan): CorruptionSchedule {
  return {
    kind: 'step',
    corruption: plan.corruption,
    levels: [
      { atFrame: 0, severity: plan.lowSeverity },
      { atFrame: plan.framesPerLevel, severity: plan.highSeverity },
      { atFrame: 2 * plan.framesPerLevel, severity: plan.lowSeverity },
    ],
  };
}

/** Realisation r's corruption seed. */
export function realisationSeed(planSeed: number, realisation: number): number {
  return (planSeed * 7919 + realisation * 104_729 + 1) >>> 0;
}

/**
 * Where each realisation starts in a source of `sourceFrames` frames: seeded offsets, so the
 * realisations see different images and the mean u* steps with noise that averages out (the same
 * frames in every realisation would leave the images' own u* pattern in the mean, which no bootstrap
 * over realisations sees).
 */
export function stepProbeOffsets(plan: StepProbePlan, sourceFrames: number): number[] {
  const frames = stepProbeFrames(plan);
  if (sourceFrames < frames)
    throw new KnobError(
      'INVALID_INPUT',
      `the step probe needs ${frames} frames per realisation; the source has ${sourceFrames}`,
    );
  const random = seededRandom(plan.seed ^ 0x5eed);
  return Array.from({ length: plan.realisations }, () => Math.floor(random() * (sourceFrames - frames + 1)));
}

export interface StepProbeResult {
  plan: StepProbePlan;
  settings: GateSettings;
  hSeconds: number;
  /** The first frame of the window driven by the high level. */
  stepFrame: number;
  summary: StepProbeSummary;
  /** Predictions for the knobs: the continuous system and the discrete update at the frame rate. */
  analytic: ResponseMetrics;
  discrete: DiscreteResponseMetrics;
  /** ζ and ωn fitted to realisation 0's (u*, g) over the whole recording (second-order only). */
  identified: IdentifiedSecondOrder | null;
  /** Why there is no identification (another variant, or the fit refused the recording). */
  identificationNote: string | null;
  /** Frames where g left [0, 1] (the fusion read it clamped), over all realisations. */
  clippedFrames: number;
}

export interface StepProbeAtOptions {
  replicates?: number;
  level?: number;
  band?: StepProbeBand;
}

/** The probe at `settings`, from its recorded realisations (a replay each; no model). */
export function stepProbeAt(
  traces: Trace[],
  plan: StepProbePlan,
  settings: GateSettings,
  options: StepProbeAtOptions = {},
): StepProbeResult {
  const frames = stepProbeFrames(plan);
  if (traces.length < 2) throw new KnobError('INVALID_INPUT', `the step probe has ${traces.length} realisation(s)`);
  for (const [r, trace] of traces.entries())
    if (trace.frameCount !== frames)
      throw new KnobError('INVALID_INPUT', `realisation ${r} has ${trace.frameCount} frames, not ${frames}`);
  const hSeconds = 1 / plan.frameRateHz;
  const window = 2 * plan.framesPerLevel;
  const g: Float64Array[] = [];
  const uStar: Float64Array[] = [];
  let clippedFrames = 0;
  let identified: IdentifiedSecondOrder | null = null;
  let identificationNote: string | null =
    settings.variant === 'second-order' ? null : `the ${settings.variant} gate is not second-order`;
  for (const [r, trace] of traces.entries()) {
    const output = replay(trace, settings);
    for (let t = 0; t < frames; t++) if (output.g[t]! < 0 || output.g[t]! > 1) clippedFrames++;
    const u = Float64Array.from(trace.uRef);
    if (r === 0 && identificationNote === null) {
      try {
        identified = identifySecondOrder(u, output.g, hSeconds, settings);
      } catch (error) {
        // the fit refuses a recording it cannot identify (a typed error); anything else is a defect
        if (!(error instanceof KnobError)) throw error;
        identificationNote = error.message;
      }
    }
    g.push(output.g.subarray(0, window));
    uStar.push(u.subarray(0, window));
  }
  const summary = summariseStepProbe({ g, uStar, stepFrame: plan.framesPerLevel, hSeconds }, settings, {
    replicates: options.replicates,
    level: options.level,
    band: options.band,
    seed: plan.seed,
  });
  return {
    plan,
    settings,
    hSeconds,
    stepFrame: plan.framesPerLevel,
    summary,
    analytic: continuousResponseMetrics(settings),
    discrete: discreteResponseMetrics(settings, hSeconds, 'app'),
    identified,
    identificationNote,
    clippedFrames,
  };
}
