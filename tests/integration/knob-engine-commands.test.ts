import { createHash } from 'node:crypto';
/**
 * The `knob` command's engine half, run as a user runs it (node bin/knob.mjs): run, replay,
 * metrics, table and bench with --json, their files, their exit codes, and the hostile inputs that
 * must end in a one-line reason naming the file (exit 1) while keeping the frames already processed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { writeIdxFile } from '../../src-main/core/datasets/idx-file';
import { livePipelineOnNewRecording } from '../../src-main/core/engine/live-pipeline';
import { InferenceClient } from '../../src-main/core/inference/inference-client';
import { cpuSessionLayout } from '../../src-main/core/inference/session-layout';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { readTraceFile, writeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { buildOnnxModel, classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { knob } from '../support/knob-cli';
import { fashionMnistSample } from '../support/fashion-mnist';
import { npyBytes } from '../support/npy-writer';
import { unknownProvenance } from '../../src-main/core/report/provenance';

const dir = mkdtempSync(join(tmpdir(), 'knob-cli-'));
const sample = fashionMnistSample(1000);
const clients: InferenceClient[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

function expectOneLineFailure(result: { status: number | null; stderr: string }, pattern: RegExp): void {
  expect(result.status).toBe(1);
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('knob:'));
  expect(lines.length).toBe(1);
  expect(lines[0]).toMatch(pattern);
}

/**
 * One recorded run that several tests read (run once, on first use, whichever test asks first), so
 * each test can run alone and none depends on another's output folder.
 */
const runDir = join(dir, 'run');
let recordedRun: Promise<{ status: number | null; stdout: string; stderr: string }> | null = null;
function knobRun(): Promise<{ status: number | null; stdout: string; stderr: string }> {
  recordedRun ??= knob(
    'run',
    '--model',
    'default',
    '--source',
    'default',
    '--limit',
    '400',
    '--schedule',
    'step',
    '--corrupt',
    'fog',
    '--levels',
    '0:0,200:4',
    '--out',
    runDir,
    '--json',
  );
  return recordedRun;
}

describe('knob run / replay / metrics', () => {
  it('knob run writes the Arrow trace, metrics with identities and a self-contained report', async () => {
    const result = await knobRun();
    expect(result.status).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      frames: number;
      model: { executionProvider: string; skippedProviders: unknown[] };
      fused: Array<{ identity: string; value: number }>;
    };
    expect(summary.frames).toBe(400);
    expect(summary.model.executionProvider).toBe('cpu');
    expect(
      summary.fused.some((m) => m.identity === 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)'),
    ).toBe(true);
    expect(readFileSync(join(runDir, 'trace.arrow')).subarray(0, 6).toString()).toBe('ARROW1');
    const metrics = JSON.parse(readFileSync(join(runDir, 'metrics.json'), 'utf8')) as {
      metrics: { fused: Array<{ identity: string }> };
    };
    expect(metrics.metrics.fused.some((m) => m.identity.includes('[preset torchmetrics-15]'))).toBe(true);
    const html = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|src=/);
    const file = await readTraceFile(join(runDir, 'trace.arrow'));
    expect(file.trace.frameCount).toBe(400);
    const corruption = file.trace.metadata.corruption;
    expect(corruption.kind === 'category' && corruption.dictionary.includes('fog')).toBe(true);
  });

  it('knob replay of a recorded trace reproduces the run; other settings give other outputs', async () => {
    await knobRun();
    const same = await knob('replay', join(runDir, 'trace.arrow'), '--out', join(dir, 'replay-same'), '--json');
    expect(same.status).toBe(0);
    const original = await readTraceFile(join(runDir, 'trace.arrow'));
    const replayed = await readTraceFile(join(dir, 'replay-same', 'trace.arrow'));
    expect(Array.from(replayed.run!.output.g)).toEqual(Array.from(original.run!.output.g));
    expect(Array.from(replayed.run!.output.confidence)).toEqual(Array.from(original.run!.output.confidence));
    // The replay reports where the trace came from: the run's model (by SHA-256), source and schedule.
    const rows = (dir: string): Record<string, string> =>
      (JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8')) as { provenance: Record<string, string> })
        .provenance;
    const runRows = rows(runDir);
    const replayRows = rows(join(dir, 'replay-same'));
    expect(runRows['model SHA-256']).toBe(createHash('sha256').update(readFileSync(DEFAULT_MODEL_PATH)).digest('hex'));
    for (const row of ['model', 'model SHA-256', 'contract', 'source', 'frames', 'corruption schedule', 'seed'])
      expect(replayRows[row], row).toBe(runRows[row]);
    expect(runRows.trace).toBe('offline run (knob run)');
    expect(replayRows.trace).toBe(`replay of ${join(runDir, 'trace.arrow')}`);
    const other = await knob(
      'replay',
      join(runDir, 'trace.arrow'),
      '--zeta',
      '0.2',
      '--wn',
      '20',
      '--out',
      join(dir, 'replay-other'),
    );
    expect(other.status).toBe(0);
    const changed = await readTraceFile(join(dir, 'replay-other', 'trace.arrow'));
    expect(changed.run!.settings.zeta).toBe(0.2);
    expect(Array.from(changed.run!.output.g)).not.toEqual(Array.from(original.run!.output.g));
  });

  it('live stepping and knob replay of the saved trace give identical fused outputs', async () => {
    const client = await InferenceClient.start(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH }));
    clients.push(client);
    const session = livePipelineOnNewRecording({
      client,
      description: 'test',
      provenance: unknownProvenance('test frames', 'test'),
      frameRateHz: 30,
      schedule: { kind: 'constant', corruption: 'gaussian_noise', severity: 3 },
      streamSeed: 3,
    });
    const recording = session.recording;
    let t = 0;
    for (let i = 0; i < 150; i++) {
      t += (1 + (i % 3)) / 60; // irregular frame intervals, as a camera delivers them
      session.submit(sample.images[i], { width: 28, height: 28, channels: 1 }, t, sample.labels[i]);
      await session.idle();
    }
    const livePath = join(dir, 'live.arrow');
    const { trace, output } = recording.copy();
    await writeTraceFile(livePath, trace, { settings: DEFAULT_GATE_SETTINGS, output });
    session.close();
    const result = await knob('replay', livePath, '--out', join(dir, 'live-replay'));
    expect(result.status).toBe(0);
    const live = await readTraceFile(livePath);
    const replayed = await readTraceFile(join(dir, 'live-replay', 'trace.arrow'));
    for (const key of ['g', 'v', 'confidence'] as const)
      expect(Array.from(replayed.run!.output[key])).toEqual(Array.from(live.run!.output[key]));
    expect(Array.from(replayed.run!.output.top1)).toEqual(Array.from(live.run!.output.top1));
  });

  it('knob metrics reads logits and labels from npy, csv and json, or a trace, every value with its identity', async () => {
    const logits = new Float32Array(200 * 3);
    const labels = new Int32Array(200);
    for (let i = 0; i < 200; i++) {
      labels[i] = i % 3;
      for (let k = 0; k < 3; k++) logits[i * 3 + k] = k === labels[i] ? 1 + (i % 7) * 0.3 : ((i * (k + 1)) % 5) * 0.4;
    }
    writeFileSync(join(dir, 'logits.npy'), npyBytes(logits, [200, 3]));
    writeFileSync(join(dir, 'labels.csv'), `label\n${Array.from(labels).join('\n')}\n`);
    writeFileSync(join(dir, 'labels.json'), JSON.stringify(Array.from(labels)));
    const fromNpy = await knob(
      'metrics',
      '--logits',
      join(dir, 'logits.npy'),
      '--labels',
      join(dir, 'labels.csv'),
      '--json',
    );
    expect(fromNpy.status).toBe(0);
    const report = JSON.parse(fromNpy.stdout) as {
      samples: number;
      metrics: Array<{ name: string; identity: string; value: number }>;
    };
    expect(report.samples).toBe(200);
    expect(report.metrics.find((m) => m.name === 'accuracy')?.value).toBeGreaterThan(0.5);
    for (const preset of ['torchmetrics-15', 'netcal-10', 'kumar-debiased-l2-15', 'smooth-ece', 'sklearn-curve-10']) {
      expect(report.metrics.some((m) => m.identity.endsWith(`[preset ${preset}]`))).toBe(true);
    }
    const chosen = await knob(
      'metrics',
      '--logits',
      join(dir, 'logits.npy'),
      '--labels',
      join(dir, 'labels.json'),
      '--bins',
      '10',
      '--binning',
      'equal-mass',
      '--json',
    );
    const narrowed = JSON.parse(chosen.stdout) as { metrics: Array<{ identity: string }> };
    expect(narrowed.metrics.some((m) => m.identity.includes('10 equal-mass'))).toBe(true);
    expect(narrowed.metrics.some((m) => m.identity.includes('15 equal-width'))).toBe(false);
    await knobRun();
    const fromTrace = await knob(
      'metrics',
      '--trace',
      join(runDir, 'trace.arrow'),
      '--preset',
      'netcal-10',
      '--intervals',
      '--json',
    );
    expect(fromTrace.status).toBe(0);
    type Subject = {
      subject: string;
      samples: number;
      metrics: Array<{ identity: string; value: number }>;
      headline: Array<{ name: string; value: number; lo: number; hi: number }>;
    };
    const traced = JSON.parse(fromTrace.stdout) as Subject & { branches: Subject[] };
    expect(traced.samples).toBe(400);
    // The fused output, then each branch on the same frames, each with its headline intervals.
    expect(traced.subject).toMatch(/^fused output of /);
    expect(traced.branches.map((b) => b.subject.split(' ')[0])).toEqual(['static', 'dynamic']);
    for (const subject of [traced, ...traced.branches]) {
      expect(subject.headline.map((h) => h.name)).toEqual(['accuracy', 'NLL', 'Brier', 'ECE']);
      for (const h of subject.headline) expect(h.lo <= h.hi && Number.isFinite(h.lo)).toBe(true);
    }
    const staticEce = traced.branches[0].metrics[0].value;
    expect(staticEce).not.toBe(traced.metrics[0].value);
    const mismatch = await knob('metrics', '--logits', join(dir, 'logits.npy'), '--labels', join(dir, 'logits.npy'));
    expectOneLineFailure(mismatch, /labels must be one value per row/);
  });

  it('a trace written by pandas-facing tools reads back in pandas when pyarrow is installed', async (context) => {
    const probe = spawnSync('/usr/bin/python3', ['-c', 'import pandas, pyarrow'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      context.skip(
        `pandas.read_feather needs pandas and pyarrow in /usr/bin/python3; not installed here (Debian bookworm packages no pyarrow): ${probe.stderr.trim().split('\n').pop()}`,
      );
    }
    await knobRun();
    const script = `import pandas; df = pandas.read_feather('${join(runDir, 'trace.arrow')}'); print(len(df), len(df['z_static'][0]), df['g'].iloc[-1])`;
    const read = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8' });
    expect(read.status).toBe(0);
    const file = await readTraceFile(join(runDir, 'trace.arrow'));
    const [rows, classes, g] = read.stdout.trim().split(' ');
    expect(Number(rows)).toBe(400);
    expect(Number(classes)).toBe(10);
    expect(Number(g)).toBe(file.run!.output.g[399]);
  });
});

describe('knob table and knob bench', () => {
  it('knob table: Static, Dynamic and the three gate variants in reset mode, as JSON', async () => {
    const result = await knob('table', '--images-per-condition', '60', '--corruptions', 'gaussian_noise,fog', '--json');
    expect(result.status).toBe(0);
    const table = JSON.parse(result.stdout) as {
      conditions: number;
      rows: Array<{
        method: string;
        accuracy: number;
        error: number;
        ece: number;
        debiasedL2Ce: number;
        nll: number;
        latencyMsPerFrame: number;
      }>;
    };
    expect(table.conditions).toBe(10);
    expect(table.rows.map((r) => r.method)).toEqual(['Static', 'Dynamic', 'Knob-IA', 'ODE-Lite', 'Knob-ODE']);
    for (const row of table.rows) {
      expect(row.accuracy + row.error).toBeCloseTo(1, 12);
      for (const v of [row.ece, row.debiasedL2Ce, row.nll, row.latencyMsPerFrame])
        expect(Number.isFinite(v) && v >= 0).toBe(true);
    }
    // Gate variants cost more per frame than a branch alone (the gate is not free, only cheap).
    expect(table.rows[4].latencyMsPerFrame).toBeGreaterThan(table.rows[0].latencyMsPerFrame);
  });

  it('knob table with its default corruptions works on the grayscale model, with intervals', async () => {
    const result = await knob('table', '--images-per-condition', '20', '--intervals', '--json');
    expect(result.status, result.stderr).toBe(0);
    type Interval = { lo: number; hi: number; method: string };
    const table = JSON.parse(result.stdout) as {
      conditions: number;
      corruptions: string[];
      rows: Array<{
        accuracy: number;
        ece: number;
        nll: number;
        intervals: { accuracy: Interval; ece: Interval; nll: Interval };
      }>;
    };
    // Every corruption a grayscale frame can take; the colour ones (saturate) are not among them.
    expect(table.corruptions).not.toContain('saturate');
    expect(table.conditions).toBe(table.corruptions.length * 5);
    const groups = table.conditions;
    for (const row of table.rows) {
      // each figure's interval contains its estimate and names its own method
      for (const figure of ['accuracy', 'ece', 'nll'] as const) {
        expect(row.intervals[figure].lo).toBeLessThanOrEqual(row[figure]);
        expect(row.intervals[figure].hi).toBeGreaterThanOrEqual(row[figure]);
      }
      // Kish's effective n of equal groups of 20 is their total (printed to 6 significant figures)
      expect(row.intervals.accuracy.method).toMatch(
        new RegExp(
          `^95 % Wilson score interval of the mean over ${groups} groups, .* \\(Kish\\) = ${groups * 20}(\\.0+)?$`,
        ),
      );
      expect(row.intervals.ece.method).toMatch(
        new RegExp(`^95 % bias-corrected basic bootstrap .*, stratified \\(${groups} groups\\) 200 resamples, seed 0$`),
      );
      expect(row.intervals.nll.method).toBe(
        `95 % stratified (${groups} groups) percentile bootstrap, 200 resamples, seed 0`,
      );
    }
  });

  it('knob table with fewer frames per condition than 15 equal-mass bins: the debiased L2-CE not computed, and why', async () => {
    const args = ['table', '--images-per-condition', '10', '--corruptions', 'fog'];
    const result = await knob(...args, '--json');
    expect(result.status, result.stderr).toBe(0);
    const table = JSON.parse(result.stdout) as {
      rows: Array<{ ece: number; debiasedL2Ce: number | null; unavailable?: { debiasedL2Ce: unknown } }>;
    };
    for (const row of table.rows) {
      expect(row.debiasedL2Ce).toBeNull();
      expect(row.unavailable).toEqual({ debiasedL2Ce: { reason: 'not enough frames', needed: 15, got: 10 } });
      expect(Number.isFinite(row.ece)).toBe(true);
    }
    const markdown = await knob(...args);
    expect(markdown.status, markdown.stderr).toBe(0);
    expect(markdown.stdout).toContain(
      'debiased L2-CE not computed (—): not enough frames: needs 15, got 10 frames per condition.',
    );
  });

  it('knob bench reports bare vs engine throughput, the gate share and live latency from one run', async () => {
    const result = await knob(
      'bench',
      '--frames',
      '512',
      '--batch',
      '128',
      '--rounds',
      '1',
      '--live-seconds',
      '1',
      '--json',
    );
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as {
      bare: { framesPerSecond: number };
      bareEngineLayout: { framesPerSecond: number; sessions: number; threadsPerSession: number };
      engine: { framesPerSecond: number };
      engineToBareRatio: number;
      engineToBareEngineLayoutRatio: number;
      gateFusion: { fractionOfInference: number };
      live: { submitted: number; processed: number; dropped: number; endToEnd: { p95Ms: number } };
    };
    expect(report.engineToBareRatio).toBeCloseTo(report.engine.framesPerSecond / report.bare.framesPerSecond, 12);
    // The like-for-like figure: bare sessions in the inference process's layout (session-layout.ts).
    expect(report.bareEngineLayout).toMatchObject(cpuSessionLayout());
    expect(report.engineToBareEngineLayoutRatio).toBeCloseTo(
      report.engine.framesPerSecond / report.bareEngineLayout.framesPerSecond,
      12,
    );
    expect(report.gateFusion.fractionOfInference).toBeGreaterThan(0);
    expect(report.live.submitted).toBe(60);
    expect(report.live.processed + report.live.dropped).toBe(60);
    expect(report.live.endToEnd.p95Ms).toBeGreaterThan(0);
  });
});

describe('hostile input to knob run and replay', () => {
  it('truncated and non-ONNX model files, unexpected outputs and unresolvable dynamic shapes', async () => {
    writeFileSync(join(dir, 'truncated.onnx'), readFileSync(DEFAULT_MODEL_PATH).subarray(0, 5000));
    expectOneLineFailure(
      await knob('run', '--model', join(dir, 'truncated.onnx'), '--source', 'default', '--out', join(dir, 'x')),
      /truncated\.onnx: not an ONNX model/,
    );
    writeFileSync(join(dir, 'text.onnx'), 'this is a text file, not a model');
    expectOneLineFailure(
      await knob('run', '--model', join(dir, 'text.onnx'), '--source', 'default', '--out', join(dir, 'x')),
      /text\.onnx: not an ONNX model/,
    );
    const twoOutputs = buildOnnxModel({
      inputs: [{ name: 'x', shape: ['N', 1, 28, 28] }],
      outputs: [
        { name: 'a', shape: ['N', 1, 28, 28] },
        { name: 'b', shape: ['N', 1, 28, 28] },
      ],
      nodes: [
        { op: 'Identity', inputs: ['x'], outputs: ['a'] },
        { op: 'Identity', inputs: ['x'], outputs: ['b'] },
      ],
    });
    writeFileSync(join(dir, 'two-outputs.onnx'), twoOutputs);
    expectOneLineFailure(
      await knob('run', '--model', join(dir, 'two-outputs.onnx'), '--source', 'default', '--out', join(dir, 'x')),
      /two-outputs\.onnx: unexpected outputs \(a, b\)/,
    );
    const weights = classMeanWeights(sample.images.slice(0, 300), sample.labels.slice(0, 300), 10, 4);
    writeFileSync(join(dir, 'dynamic.onnx'), linearClassifier({ ...weights, inputShape: ['N', 'C', 'H', 'W'] }));
    expectOneLineFailure(
      await knob('run', '--model', join(dir, 'dynamic.onnx'), '--source', 'default', '--out', join(dir, 'x')),
      /dynamic\.onnx: input 'x' has dynamic or non-image shape \[N, C, H, W\]/,
    );
  });

  it('NaN logits part-way through a run: a typed error naming the frame, and the frames before it are kept', async () => {
    // logits = linear(x) + 0 * sqrt(0.999 - max(x)): finite unless an image holds a 255 pixel.
    const weights = classMeanWeights(sample.images.slice(0, 300), sample.labels.slice(0, 300), 10, 4);
    const model = buildOnnxModel({
      inputs: [{ name: 'x', shape: ['N', 1, 28, 28] }],
      outputs: [{ name: 'logits', shape: ['N', 10] }],
      nodes: [
        { op: 'Flatten', inputs: ['x'], outputs: ['flat'], attributes: { axis: 1 } },
        { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
        { op: 'Add', inputs: ['product', 'b'], outputs: ['linear'] },
        { op: 'ReduceMax', inputs: ['flat'], outputs: ['peak'], attributes: { axes: [1], keepdims: 1 } },
        { op: 'Sub', inputs: ['limit', 'peak'], outputs: ['room'] },
        { op: 'Sqrt', inputs: ['room'], outputs: ['root'] },
        { op: 'Mul', inputs: ['root', 'zero'], outputs: ['poison'] },
        { op: 'Add', inputs: ['linear', 'poison'], outputs: ['logits'] },
      ],
      initializers: [
        { name: 'W', dims: [784, 10], values: weights.weights },
        { name: 'b', dims: [10], values: weights.bias },
        { name: 'limit', dims: [], values: Float32Array.of(0.999) },
        { name: 'zero', dims: [], values: Float32Array.of(0) },
      ],
    });
    writeFileSync(join(dir, 'nan-on-white.onnx'), model);
    const images = new Uint8Array(700 * 784);
    for (let i = 0; i < 700; i++)
      for (let p = 0; p < 784; p++) images[i * 784 + p] = Math.min(254, sample.images[i][p]);
    images[600 * 784 + 400] = 255;
    await writeIdxFile(join(dir, 'poison-images-idx3-ubyte'), { dimensions: [700, 28, 28], data: images });
    await writeIdxFile(join(dir, 'poison-labels-idx1-ubyte'), {
      dimensions: [700],
      data: Uint8Array.from(sample.labels.slice(0, 700)),
    });
    const out = join(dir, 'poisoned');
    const result = await knob(
      'run',
      '--model',
      join(dir, 'nan-on-white.onnx'),
      '--source',
      join(dir, 'poison-images-idx3-ubyte'),
      '--batch',
      '100',
      '--out',
      out,
    );
    expectOneLineFailure(result, /nan-on-white\.onnx: output 'logits' is NaN at frame 600 .*kept the 600 frames/);
    const kept = await readTraceFile(join(out, 'trace.arrow'));
    expect(kept.trace.frameCount).toBe(600);
    // The outputs say they are partial, and why.
    const metrics = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8')) as { partial: unknown };
    expect(metrics.partial).toMatchObject({ framesProcessed: 600, framesExpected: 700 });
    expect((metrics.partial as { reason: string }).reason).toMatch(/NaN at frame 600/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toMatch(
      /<p class="partial" role="alert">Partial run: 600 of 700 frames, stopped by: .*NaN at frame 600/,
    );
  });

  it('a trace from a newer format version, and bad usage', async () => {
    await knobRun();
    const file = await readTraceFile(join(runDir, 'trace.arrow'));
    await writeTraceFile(join(dir, 'future.arrow'), { ...file.trace, formatVersion: 99 }, null);
    expectOneLineFailure(
      await knob('replay', join(dir, 'future.arrow'), '--out', join(dir, 'y')),
      /future\.arrow: trace format version 99 is newer than this app reads \(1\)/,
    );
    expect(existsSync(join(dir, 'y'))).toBe(false);
    expect((await knob('run', '--source', 'default')).status).toBe(2);
    expect(
      (await knob('run', '--source', 'default', '--out', join(dir, 'z'), '--schedule', 'wobble', '--corrupt', 'fog'))
        .status,
    ).toBe(2);
    expect((await knob('metrics')).status).toBe(2);
    const help = await knob('--help');
    // one line per command; each command's options are in its own --help
    for (const command of ['run', 'replay', 'metrics', 'calibrate', 'export', 'verify', 'table', 'bench', 'tune'])
      expect(help.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
  });

  it('knob COMMAND --help for every command, and negative numbers are values', async () => {
    const commands = ['run', 'replay', 'metrics', 'calibrate', 'table', 'bench', 'response', 'corrupt', 'model-card'];
    const helps = await Promise.all(commands.map((command) => knob(command, '--help')));
    for (const [i, command] of commands.entries()) {
      const help = helps[i];
      expect(help.status, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`^Usage:\\n  knob ${command} `));
      expect(help.stdout, command).not.toContain(`knob ${command === 'run' ? 'replay' : 'run'} `);
    }
    // A negative value reaches the range check that names the option, not the parser's "unknown option '-1'".
    const negative = await knob('response', '--zeta', '-1');
    expect(negative.status).toBe(2);
    expect(negative.stderr).toMatch(/zeta: zeta must lie in \[0\.001, 100\]/);
    expect(negative.stderr).not.toMatch(/Unknown option/i);
    const seed = await knob('run', '--source', 'default', '--out', join(dir, 'neg'), '--seed', '-5');
    expect(seed.status).toBe(2);
    expect(seed.stderr).toMatch(/--seed must be an integer from 0 to 4294967295, got '-5'/);
    expect((await knob('response', '--g0', '-0', '--json')).status).toBe(0);
  });

  it('knob model-card --out-dir creates its folder, and refuses an unusable one before the work', async () => {
    const out = join(dir, 'card', 'nested');
    const made = await knob('model-card', '--images-per-condition', '1', '--out-dir', out);
    expect(made.status, made.stderr).toBe(0);
    expect(existsSync(join(out, 'knob-fmnist.card.md'))).toBe(true);
    writeFileSync(join(dir, 'not-a-folder'), 'x');
    const refused = await knob('model-card', '--out-dir', join(dir, 'not-a-folder', 'card'));
    expectOneLineFailure(refused, /not-a-folder/);
  });

  it('knob calibrate: held-out comparison with intervals, and the fitted calibrator written as settings', async () => {
    await knobRun();
    const out = join(dir, 'calibrated-settings.json');
    const result = await knob(
      'calibrate',
      '--trace',
      join(runDir, 'trace.arrow'),
      '--method',
      'temperature',
      '--split',
      'kfold',
      '--folds',
      '4',
      '--out',
      out,
      '--json',
    );
    expect(result.status, result.stderr).toBe(0);
    const comparison = JSON.parse(result.stdout) as {
      split: string;
      evaluatedFrames: number;
      before: Array<{ name: string; value: number; lo: number; hi: number }>;
      methods: Array<{ method: string; spec: { method: string; temperature: number }; top1Changed: number }>;
      chosen: string;
    };
    expect(comparison.split).toMatch(/^4-fold cross-fitting/);
    expect(comparison.evaluatedFrames).toBe(400);
    expect(comparison.methods[0].top1Changed).toBe(0);
    expect(comparison.before.map((f) => f.name)).toContain('SmoothECE');
    const settings = JSON.parse(readFileSync(out, 'utf8')) as { format: string; calibrator: { method: string } };
    expect(settings).toMatchObject({ format: 'knob-settings', calibrator: { method: 'temperature' } });
    expect(settings.calibrator).toEqual(comparison.methods[0].spec);
    // Bad usage names the option.
    const bad = await knob('calibrate', '--trace', join(runDir, 'trace.arrow'), '--method', 'magic');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--method must be one of temperature, vector/);
  });

  it('--settings reads the settings file the desk exports (gate options override it)', async () => {
    await knobRun();
    const settingsPath = join(dir, 'exported-settings.json');
    writeFileSync(
      settingsPath,
      JSON.stringify({
        format: 'knob-settings',
        formatVersion: 1,
        gate: { ...DEFAULT_GATE_SETTINGS, zeta: 0.3, wnRadPerSec: 14 },
        model: null,
        exportedAt: '2026-11-30T00:00:00.000Z',
      }),
    );
    const replayed = await knob(
      'replay',
      join(runDir, 'trace.arrow'),
      '--settings',
      settingsPath,
      '--wn',
      '9',
      '--out',
      join(dir, 'replay-settings'),
      '--json',
    );
    expect(replayed.status, replayed.stderr).toBe(0);
    const summary = JSON.parse(replayed.stdout) as { settings: { zeta: number; wnRadPerSec: number } };
    expect(summary.settings).toMatchObject({ zeta: 0.3, wnRadPerSec: 9 });
    expectOneLineFailure(
      await knob(
        'replay',
        join(runDir, 'trace.arrow'),
        '--settings',
        join(dir, 'missing.json'),
        '--out',
        join(dir, 'q'),
      ),
      /missing\.json/,
    );
  });
});
