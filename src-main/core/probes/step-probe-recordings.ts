import type { z } from 'zod';
import type { StepProbeParamsSchema, StepProbeView } from '../../../src-shared/api/measurements';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { stepProbeFigure } from '../../../src-shared/plots/probe-plots';
import { parseStepProbePlan, stepProbeAt, stepProbeFrames, type StepProbePlan } from '../../../src-shared/probes';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CallContext } from '../api/call-context';
import type { InferenceClient } from '../inference/inference-client';
import { openSourcePath } from '../sources/open-source';
import { recordStepProbe } from './probe-recording';

/**
 * The desk's step probe: its realisations recorded through the model once per (parameters,
 * model), over the embedded test set at 30 fps, then replayed at whatever knobs each later call
 * has (a knob change costs a replay and the band's resampling, no model pass). A call that asks
 * for what is being recorded waits for that recording instead of starting another.
 */
type StepProbeParams = z.output<typeof StepProbeParamsSchema>;

interface Recorded {
  key: string;
  plan: StepProbePlan;
  traces: Trace[];
  description: string;
  recordMs: number;
}

const PROBE_FRAME_RATE_HZ = 30;

const nullable = (values: ArrayLike<number>) => Array.from(values, (v) => (Number.isFinite(v) ? v : null));
const finiteOrNull = (v: number | null) => (v !== null && Number.isFinite(v) ? v : null);

export class StepProbeRecordings {
  private recorded: Recorded | null = null;
  private pending: { key: string; done: Promise<Recorded> } | null = null;

  async viewAt(
    params: StepProbeParams,
    client: InferenceClient,
    settings: GateSettings,
    settingsVersion: number,
    call: CallContext,
  ): Promise<StepProbeView> {
    const key = JSON.stringify([params, client.description.sha256]);
    let recordMs: number | null = null;
    if (this.recorded?.key !== key) {
      if (this.pending?.key !== key) {
        const done = this.record(key, params, client, call);
        this.pending = { key, done };
        done.then(
          () => undefined,
          () => undefined,
        );
      }
      const pending = this.pending!;
      try {
        this.recorded = await pending.done;
      } finally {
        if (this.pending === pending) this.pending = null;
      }
      recordMs = this.recorded.recordMs;
    }
    const { plan, traces, description } = this.recorded!;
    const started = performance.now();
    const result = stepProbeAt(traces, plan, settings);
    const replayMs = performance.now() - started;
    const figure = stepProbeFigure(result);
    const { measured, predictedInfo } = result.summary;
    const a = result.analytic;
    return {
      settingsVersion,
      description,
      recordMs,
      replayMs,
      tSeconds: Array.from(figure.tSeconds),
      measured: nullable(figure.measured),
      predicted: nullable(figure.predicted),
      bandLo: nullable(figure.bandLo),
      bandHi: nullable(figure.bandHi),
      meanG: nullable(figure.meanG),
      medianG: nullable(figure.medianG),
      q25G: nullable(figure.q25G),
      q75G: nullable(figure.q75G),
      meanUStar: nullable(figure.meanUStar),
      realisations: figure.realisations,
      bandLabel: figure.bandLabel,
      insideFraction: figure.insideFraction,
      insideFractionTransient: result.summary.insideFractionTransient,
      uBefore: result.summary.uBefore,
      uAfter: result.summary.uAfter,
      rows: [
        {
          name: 'rise time 10-90 %',
          unit: 's',
          measured: finiteOrNull(measured.riseTimeSeconds),
          discrete: finiteOrNull(predictedInfo.riseTimeSeconds),
          continuous: finiteOrNull(a.riseTimeSeconds),
        },
        {
          name: '2 % settling time',
          unit: 's',
          measured: finiteOrNull(measured.settlingTimeSeconds),
          discrete: finiteOrNull(predictedInfo.settlingTimeSeconds),
          continuous: finiteOrNull(a.settlingTimeSeconds),
        },
        {
          name: 'overshoot',
          unit: '%',
          measured: finiteOrNull(measured.overshootPercent),
          discrete: finiteOrNull(predictedInfo.overshootPercent),
          continuous: finiteOrNull(a.overshootPercent),
        },
      ],
      identified:
        result.identified === null
          ? null
          : { zeta: result.identified.zeta, wnRadPerSec: result.identified.wnRadPerSec },
      identificationNote: result.identificationNote,
      clippedFrames: result.clippedFrames,
    };
  }

  private async record(
    key: string,
    params: StepProbeParams,
    client: InferenceClient,
    call: CallContext,
  ): Promise<Recorded> {
    const plan = parseStepProbePlan({ ...params, frameRateHz: PROBE_FRAME_RATE_HZ });
    const source = await openSourcePath('default', {
      target: client.description.input,
      frameRateHz: PROBE_FRAME_RATE_HZ,
      labelNames: client.description.labelNames,
    });
    const task = `step probe: ${plan.realisations} realisations through the model`;
    const started = performance.now();
    try {
      const traces = await recordStepProbe(plan, {
        client,
        source,
        signal: call.signal,
        onProgress: (done, total) => call.progress(task, done, total),
      });
      const description = `${plan.corruption.replaceAll('_', ' ')} ${plan.lowSeverity} → ${plan.highSeverity} → ${plan.lowSeverity}, ${plan.realisations} realisations of ${stepProbeFrames(plan)} frames at ${plan.frameRateHz} fps over ${source.info.description}`;
      return { key, plan, traces, description, recordMs: performance.now() - started };
    } catch (error) {
      if (call.signal.aborted) throw new KnobError('CANCELLED', 'the step probe was cancelled');
      throw error;
    }
  }
}
