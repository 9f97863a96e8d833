import { isCorruptionName, CORRUPTION_NAMES } from '../../../src-shared/corruptions';
import { describeSettings } from '../../core/report/provenance';
import {
  bodeProbeFigure,
  bodeProbePlotSvg,
  stepProbeFigure,
  stepProbePlotSvg,
  stepProbeRawPlotSvg,
} from '../../../src-shared/plots/probe-plots';
import {
  describeFrequencyProbePlan,
  describeStepProbePlan,
  stepProbeFrames,
  type FrequencyProbeResult,
  type StepProbeResult,
} from '../../../src-shared/probes';
import { checkOutputFolder, writeOutputFiles } from '../../core/files/output-files';
import { InferenceClient } from '../../core/inference/inference-client';
import { FREQUENCY_PROBE, gateProbeAt, recordGateProbe, STEP_PROBE } from '../../core/use-cases/probe-gate';
import { sectionReportFiles, type ReportSection } from '../../core/report/section-report';
import {
  GATE_OPTIONS,
  frameRateOption,
  numberInRange,
  parseCommandArgs,
  positiveInteger,
  seedOption,
  settingsFromArgs,
  checkSettingsForModel,
} from '../cli-args';
import { UsageError } from '../usage-error';
import { commandCall } from '../command-call';
import { printJson } from '../json-output';
import { SOURCE_OPTIONS, openSourceFromArgs } from '../source-args';
import { describeModel, MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';

const seconds = (v: number | null) => (v === null || !Number.isFinite(v) ? '—' : v.toFixed(3));
const percent = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '—');

function stepRows(result: StepProbeResult): string[][] {
  const { measured, predictedInfo } = result.summary;
  const a = result.analytic;
  return [
    [
      'rise time 10-90 % (s)',
      seconds(measured.riseTimeSeconds),
      seconds(predictedInfo.riseTimeSeconds),
      seconds(a.riseTimeSeconds),
    ],
    [
      '2 % settling time (s)',
      seconds(measured.settlingTimeSeconds),
      seconds(predictedInfo.settlingTimeSeconds),
      seconds(a.settlingTimeSeconds),
    ],
    [
      'overshoot (%)',
      percent(measured.overshootPercent),
      percent(predictedInfo.overshootPercent),
      percent(a.overshootPercent),
    ],
  ];
}

function stepLines(result: StepProbeResult, recorded: string): string[] {
  const s = result.summary;
  const plan = result.plan;
  const band = `${Math.round(s.bootstrap.level * 100)} % ${s.bootstrap.band} bootstrap band (${s.bootstrap.replicates} resamples)`;
  const table = [['', 'measured', 'discrete', 'continuous'], ...stepRows(result)]
    .map(([name, ...cells]) => `  ${name!.padEnd(24)}${cells.map((c) => c!.padStart(12)).join('')}`)
    .join('\n');
  return [
    `step probe: ${describeStepProbePlan(plan)} (${recorded})`,
    `knobs: ${describeSettings(result.settings)}`,
    `u* step: mean ${s.uBefore.toFixed(3)} -> ${s.uAfter.toFixed(3)}; the response is normalised by it`,
    table,
    ...(s.noiseFloor.note === null ? [] : [`measured: ${s.noiseFloor.note}`]),
    `inside the ${band}: ${(100 * s.insideFraction).toFixed(1)} % of the frames from the step on (${(100 * s.insideFractionTransient).toFixed(1)} % of the ${s.transientFrames} transient frames)`,
    result.identified === null
      ? `identified: none (${result.identificationNote ?? 'no fit'})`
      : `identified from (u*, g) of realisation 1: zeta ${result.identified.zeta.toPrecision(4)}, wn ${result.identified.wnRadPerSec.toPrecision(4)} rad/s (residual rms ${result.identified.residualRms.toExponential(2)})`,
    `clipped frames (g outside [0, 1]): ${result.clippedFrames}`,
  ];
}

function bodeRows(result: FrequencyProbeResult): string[][] {
  return result.points.map((p) => [
    p.frequencyHz.toPrecision(3),
    `${p.measured.magnitudeDb.toFixed(2)} ± ${p.measured.magnitudeDbStandardError.toFixed(2)}`,
    p.theory.magnitudeDb.toFixed(2),
    p.magnitudeErrorInStandardErrors.toFixed(2),
    `${p.measured.phaseDeg.toFixed(1)} ± ${p.measured.phaseDegStandardError.toFixed(1)}`,
    p.theory.phaseDeg.toFixed(1),
    `${(100 * p.measured.totalHarmonicDistortion).toFixed(1)} %${p.clipped ? ' clipped' : ''}`,
  ]);
}

const BODE_COLUMNS = [
  'Hz',
  'measured dB (± SE)',
  'theory dB',
  '|error| / SE',
  'measured phase (°)',
  'theory phase (°)',
  'THD',
];

const BODE_WIDTHS = [6, 20, 12, 14, 20, 18, 12];

function bodeLines(result: FrequencyProbeResult, recorded: string): string[] {
  const plan = result.plan;
  const table = [BODE_COLUMNS, ...bodeRows(result)]
    .map((cells) => `  ${cells.map((c, i) => c.padStart(BODE_WIDTHS[i]!)).join('')}`)
    .join('\n');
  return [
    `frequency probe: ${describeFrequencyProbePlan(plan)} (${recorded})`,
    `knobs: ${describeSettings(result.settings)}; theory: the discrete (${result.settings.discretization}) update at the frame rate`,
    table,
    `low-pass: ${result.lowPass ? 'yes' : 'no'} (the highest unclipped frequency below the lowest by more than 2 standard errors)`,
  ];
}

/** knob probe step|bode: the gate's step or frequency response measured through the model. */
export async function probeCommand(args: string[]): Promise<number> {
  const [kind, ...rest] = args;
  if (kind !== 'step' && kind !== 'bode')
    throw new UsageError(`knob probe takes 'step' or 'bode' first, got '${kind ?? ''}'`);
  const { values } = parseCommandArgs(rest, {
    ...MODEL_OPTIONS,
    ...GATE_OPTIONS,
    ...SOURCE_OPTIONS,
    source: { type: 'string', default: 'default' },
    corrupt: { type: 'string' },
    'frame-rate': { type: 'string' },
    realisations: { type: 'string' },
    'frames-per-level': { type: 'string' },
    low: { type: 'string' },
    high: { type: 'string' },
    frequencies: { type: 'string' },
    mean: { type: 'string' },
    amplitude: { type: 'string' },
    seed: { type: 'string' },
    batch: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const corruption = values.corrupt ?? 'shot_noise';
  if (!isCorruptionName(corruption)) throw new UsageError(`--corrupt must be one of ${CORRUPTION_NAMES.join(', ')}`);
  const { gate: settings, settingsModel } = await settingsFromArgs(values);
  if (values.out !== undefined) await checkOutputFolder(values.out);
  const frameRateHz =
    values['frame-rate'] === undefined ? undefined : frameRateOption(values['frame-rate'], 'frame-rate', 30);
  const severity = (name: 'low' | 'high' | 'mean' | 'amplitude', fallback: number) =>
    numberInRange(values[name], name, fallback, { min: 0, max: 5 });
  // the plans, checked before the model starts (the frame rate is the source's, known once it opens)
  const stepInput = {
    corruption,
    lowSeverity: severity('low', 1),
    highSeverity: severity('high', 5),
    framesPerLevel: positiveInteger(values['frames-per-level'], 'frames-per-level', 300, 100_000),
    realisations: positiveInteger(values.realisations, 'realisations', 32, 1024),
    seed: seedOption(values.seed),
  };
  const frequencyInput = {
    corruption,
    meanSeverity: severity('mean', 3),
    amplitude: numberInRange(values.amplitude, 'amplitude', 2, { min: 0, max: 2.5, aboveMin: true }),
    frequencies: positiveInteger(values.frequencies, 'frequencies', 8, 32),
    seed: seedOption(values.seed),
  };
  if (kind === 'step') STEP_PROBE.plan(stepInput, frameRateHz ?? 30);
  else FREQUENCY_PROBE.plan(frequencyInput, frameRateHz ?? 30);
  // default: chosen from the model's input size (batch-size.ts)
  const batchSize = values.batch === undefined ? undefined : positiveInteger(values.batch, 'batch', 1, 4096);
  const client = await InferenceClient.start(modelOptionsFromArgs(values));
  const call = commandCall(`${kind} probe`, values.json);
  try {
    const model = client.description;
    checkSettingsForModel(values, settingsModel, model);
    if (!values.json) process.stderr.write(`${describeModel(model)}\n`);
    const source = await openSourceFromArgs(values, model, frameRateHz);
    const started = performance.now();
    const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
    let lines: string[];
    let sections: ReportSection[];
    let document: unknown;
    if (kind === 'step') {
      const recorded = await recordGateProbe(
        STEP_PROBE,
        { model: client, source, request: stepInput, batchSize },
        call,
      );
      const { plan } = recorded;
      const passes = `${plan.realisations} model passes, ${plan.realisations * stepProbeFrames(plan)} frames in ${took()}`;
      const { result } = gateProbeAt(STEP_PROBE, recorded, settings);
      lines = stepLines(result, passes);
      const figure = stepProbeFigure(result);
      sections = [
        {
          heading: 'Step probe',
          paragraphs: lines.filter((l) => !l.startsWith('  ')),
          table: {
            columns: ['figure', 'measured', 'discrete prediction', 'continuous prediction'],
            rows: stepRows(result),
          },
          figure: {
            name: 'step-probe',
            caption:
              'Mean gate response normalised by the mean u* step, its bootstrap band, and the discrete prediction of the knobs.',
            svg: stepProbePlotSvg(figure),
          },
        },
        {
          heading: 'The gate as recorded',
          figure: {
            name: 'step-probe-raw',
            caption: 'Mean and median g over the realisations, its inter-quartile range, and the mean u*.',
            svg: stepProbeRawPlotSvg(figure),
          },
        },
      ];
      document = { probe: 'step', model: describeModel(model), source: source.info.description, ...result };
    } else {
      const request = frequencyInput;
      const recorded = await recordGateProbe(FREQUENCY_PROBE, { model: client, source, request, batchSize }, call);
      const frames = recorded.traces.reduce((sum, t) => sum + t.frameCount, 0);
      const passes = `${recorded.traces.length} model passes, ${frames} frames in ${took()}`;
      const { result } = gateProbeAt(FREQUENCY_PROBE, recorded, settings);
      lines = bodeLines(result, passes);
      sections = [
        {
          heading: 'Frequency probe',
          paragraphs: lines.filter((l) => !l.startsWith('  ')),
          table: { columns: BODE_COLUMNS, rows: bodeRows(result) },
          figure: {
            name: 'bode-probe',
            caption: 'Measured magnitude of g relative to u* (lock-in, dB re DC) over the discrete theory curve.',
            svg: bodeProbePlotSvg(bodeProbeFigure(result)),
          },
        },
      ];
      document = { probe: 'bode', model: describeModel(model), source: source.info.description, ...result };
    }
    call.dispose();
    const written =
      values.out === undefined
        ? []
        : await writeOutputFiles(
            values.out,
            sectionReportFiles(`${kind === 'step' ? 'Step' : 'Frequency'} probe`, sections),
          );
    if (values.json) printJson({ ...(document as object), files: written });
    else for (const line of [...lines, ...written.map((w) => `wrote ${w}`)]) process.stdout.write(`${line}\n`);
    return 0;
  } finally {
    call.dispose();
    await client.close();
  }
}
