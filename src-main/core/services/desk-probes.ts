import { finiteOrNull, finiteOrNullArray } from '../../../src-shared/api/finite-or-null';
import type { z } from 'zod';
import type {
  FrequencyProbeParamsSchema,
  FrequencyProbeView,
  StepProbeParamsSchema,
  StepProbeView,
} from '../../../src-shared/api/measurements';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { bodeProbeFigure, stepProbeFigure } from '../../../src-shared/plots/probe-plots';
import type {
  FrequencyProbePlan,
  FrequencyProbeResult,
  StepProbePlan,
  StepProbeResult,
} from '../../../src-shared/probes';
import type { CallContext } from '../calls/call-context';
import type { InferenceClient } from '../inference/inference-client';
import type { FrameSource } from '../sources/frame-source';
import { openSourcePath } from '../sources/open-source';
import {
  FREQUENCY_PROBE,
  gateProbeAt,
  recordGateProbe,
  STEP_PROBE,
  type GateProbe,
  type RecordedProbe,
} from '../use-cases/probe-gate';
import { RecordedOnce } from './recorded-once';

/**
 * The desk's probes: each probe's streams recorded through the model once per (parameters, source,
 * model), over the embedded test set at 30 fps or the session's open file source at its own frame
 * rate, then replayed at whatever knobs each later call has (a knob change costs a replay, no
 * model pass). A call asking for what is being recorded waits for that recording instead of
 * starting another.
 */
type StepProbeParams = z.output<typeof StepProbeParamsSchema>;
type FrequencyProbeParams = z.output<typeof FrequencyProbeParamsSchema>;

/** What a probe records over: the embedded test set, or the open file source (the session's). */
export type ProbeSource = { kind: 'embedded' } | { kind: 'open-source'; source: FrameSource };

/** The embedded test set's frame rate for the probes (the CLI's default too). */
const EMBEDDED_FRAME_RATE_HZ = 30;

/** Tells open sources apart in the recordings' keys: a source opened again is a new one. */
const sourceIds = new WeakMap<FrameSource, number>();
let sourcesSeen = 0;

function sourceKey(over: ProbeSource): string {
  if (over.kind === 'embedded') return 'embedded';
  let id = sourceIds.get(over.source);
  if (id === undefined) sourceIds.set(over.source, (id = ++sourcesSeen));
  return `open-source ${id}`;
}

/** One probe kind's recordings, made once per (parameters, source, model) and replayed at any knobs. */
class ProbeReplays<Params extends { over: unknown }, Plan, Result> {
  private readonly once: RecordedOnce<RecordedProbe<Plan>>;

  constructor(
    private readonly probe: GateProbe<Plan, Result>,
    private readonly hold: ModelHold,
  ) {
    this.once = new RecordedOnce(probe.what);
  }

  async at(params: Params, over: ProbeSource, client: InferenceClient, settings: GateSettings, call: CallContext) {
    const { recorded, fresh } = await this.once.get(
      JSON.stringify([params, sourceKey(over), client.description.sha256]),
      call.signal,
      (signal) => this.hold(`the ${this.probe.what}`, () => this.record(client, { ...call, signal }, params, over)),
    );
    const { result, replayMs } = gateProbeAt(this.probe, recorded, settings);
    return { recorded, recordMs: fresh ? recorded.recordMs : null, result, replayMs };
  }

  /** Records over the open source, or over the embedded test set at EMBEDDED_FRAME_RATE_HZ. */
  private async record(client: InferenceClient, call: CallContext, params: Params, over: ProbeSource) {
    const source =
      over.kind === 'open-source'
        ? over.source
        : await openSourcePath('default', {
            target: client.description.input,
            frameRateHz: EMBEDDED_FRAME_RATE_HZ,
            labelNames: client.description.labelNames,
          });
    const { over: _, ...request } = params;
    return recordGateProbe(this.probe, { model: client, source, request }, call);
  }
}

/** Holds the model for `probe` (in words) while `work` records through it (the session's model lease). */
export type ModelHold = <T>(probe: string, work: () => Promise<T>) => Promise<T>;

export class DeskProbes {
  private readonly step: ProbeReplays<StepProbeParams, StepProbePlan, StepProbeResult>;
  private readonly frequency: ProbeReplays<FrequencyProbeParams, FrequencyProbePlan, FrequencyProbeResult>;

  constructor(hold: ModelHold) {
    this.step = new ProbeReplays(STEP_PROBE, hold);
    this.frequency = new ProbeReplays(FREQUENCY_PROBE, hold);
  }

  async stepAt(
    params: StepProbeParams,
    over: ProbeSource,
    client: InferenceClient,
    settings: GateSettings,
    settingsVersion: number,
    call: CallContext,
  ): Promise<StepProbeView> {
    const { recorded, recordMs, result, replayMs } = await this.step.at(params, over, client, settings, call);
    const figure = stepProbeFigure(result);
    const { measured, predictedInfo } = result.summary;
    const a = result.analytic;
    const row = (
      name: string,
      unit: string,
      pick: (info: {
        riseTimeSeconds: number | null;
        settlingTimeSeconds: number | null;
        overshootPercent: number;
      }) => number | null,
    ) => ({
      name,
      unit,
      measured: finiteOrNull(pick(measured)),
      discrete: finiteOrNull(pick(predictedInfo)),
      continuous: finiteOrNull(pick(a)),
    });
    return {
      settingsVersion,
      description: recorded.description,
      recordMs,
      replayMs,
      tSeconds: Array.from(figure.tSeconds),
      measured: finiteOrNullArray(figure.measured),
      predicted: finiteOrNullArray(figure.predicted),
      bandLo: finiteOrNullArray(figure.bandLo),
      bandHi: finiteOrNullArray(figure.bandHi),
      meanG: finiteOrNullArray(figure.meanG),
      medianG: finiteOrNullArray(figure.medianG),
      q25G: finiteOrNullArray(figure.q25G),
      q75G: finiteOrNullArray(figure.q75G),
      meanUStar: finiteOrNullArray(figure.meanUStar),
      realisations: figure.realisations,
      bandLabel: figure.bandLabel,
      insideFraction: figure.insideFraction,
      insideFractionTransient: result.summary.insideFractionTransient,
      uBefore: result.summary.uBefore,
      uAfter: result.summary.uAfter,
      rows: [
        row('rise time 10-90 %', 's', (i) => i.riseTimeSeconds),
        row('2 % settling time', 's', (i) => i.settlingTimeSeconds),
        row('overshoot', '%', (i) => i.overshootPercent),
      ],
      measuredNote: result.summary.noiseFloor.note,
      identified:
        result.identified === null
          ? null
          : { zeta: result.identified.zeta, wnRadPerSec: result.identified.wnRadPerSec },
      identificationNote: result.identificationNote,
      clippedFrames: result.clippedFrames,
    };
  }

  async frequencyAt(
    params: FrequencyProbeParams,
    over: ProbeSource,
    client: InferenceClient,
    settings: GateSettings,
    settingsVersion: number,
    call: CallContext,
  ): Promise<FrequencyProbeView> {
    const { recorded, recordMs, result, replayMs } = await this.frequency.at(params, over, client, settings, call);
    const figure = bodeProbeFigure(result);
    return {
      settingsVersion,
      description: recorded.description,
      recordMs,
      replayMs,
      discretization: figure.discretization,
      theoryHz: Array.from(figure.theoryHz),
      theoryDb: finiteOrNullArray(figure.theoryDb),
      points: result.points.map((p) => ({
        frequencyHz: p.frequencyHz,
        magnitudeDb: finiteOrNull(p.measured.magnitudeDb),
        magnitudeDbStandardError: finiteOrNull(p.measured.magnitudeDbStandardError),
        theoryDb: finiteOrNull(p.theory.magnitudeDb),
        errorInStandardErrors: finiteOrNull(p.magnitudeErrorInStandardErrors),
        phaseDeg: finiteOrNull(p.measured.phaseDeg),
        phaseDegStandardError: finiteOrNull(p.measured.phaseDegStandardError),
        theoryPhaseDeg: finiteOrNull(p.theory.phaseDeg),
        harmonicDistortion: finiteOrNull(p.measured.totalHarmonicDistortion),
        clipped: p.clipped,
      })),
      lowPass: result.lowPass,
    };
  }
}
