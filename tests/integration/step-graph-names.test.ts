/**
 * Bundles for models whose names are the step graph's own (issue 27, "deployable as exported"):
 * single classifiers whose output is named `logits` (the PyTorch default), `output` or `probs`,
 * one whose input, intermediate values, initializers and an If body use the step graph's names,
 * and two classifiers that both name their output `logits`. Each is recorded with `knob run`,
 * exported with `knob export` and checked with `knob verify` (the real CLI, onnxruntime-node):
 * every one gets a step graph with the public names of the deployment contract, equal to the app
 * within the equivalence tolerance. A bundle whose promised step graph is missing (the member
 * removed, or the manifest rewritten to say there is none) fails verify with exit 1 and one line;
 * a bundle legitimately without one (an opset-12 model) passes and says equivalence was not checked.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProto_AttributeType,
  GraphProtoSchema,
  ModelProtoSchema,
  NodeProtoSchema,
  type GraphProto,
} from 'onnx-buf';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BundleManifest } from '../../src-shared/bundle/bundle-manifest';
import { readArchive, writeArchive } from '../../src-main/core/files/zip-archive';
import { tensor, valueInfo } from '../../src-main/core/deploy/graph-builder';
import { STEP_INPUTS, STEP_OUTPUTS } from '../../src-main/core/deploy/step-graph';
import { EQUIVALENCE_TOLERANCE } from '../../src-main/core/deploy/step-graph-check';
import { fashionMnistSample } from '../support/fashion-mnist';
import { knob, knobFailureLine } from '../support/knob-cli';
import { buildOnnxModel, classMeanWeights, GREY_28X28_INPUT, linearClassifier } from '../support/onnx-builder';

const K = 10;
const dir = mkdtempSync(join(tmpdir(), 'knob-step-names-'));
const sample = fashionMnistSample(400);
const weights = classMeanWeights(sample.images, sample.labels, K, 1);
const sharper = classMeanWeights(sample.images, sample.labels, K, 3);

/** A linear classifier whose input, intermediate values, initializer and If body take the step graph's names. */
function collidingModel(): Uint8Array {
  const model = fromBinary(
    ModelProtoSchema,
    buildOnnxModel({
      inputs: [{ name: STEP_INPUTS.frames, shape: ['N', 1, 28, 28] }],
      outputs: [{ name: 'scores', shape: ['N', K] }],
      nodes: [
        { op: 'Flatten', inputs: [STEP_INPUTS.frames], outputs: [STEP_OUTPUTS.probabilities], attributes: { axis: 1 } },
        { op: 'MatMul', inputs: [STEP_OUTPUTS.probabilities, STEP_OUTPUTS.gate], outputs: ['knob::MatMul_0'] },
        { op: 'Add', inputs: ['knob::MatMul_0', 'model/logits'], outputs: [STEP_OUTPUTS.logits] },
      ],
      initializers: [
        { name: STEP_OUTPUTS.gate, dims: [784, K], values: weights.weights },
        // taken already: the renamed `logits` must find another name
        { name: 'model/logits', dims: [K], values: weights.bias },
      ],
    }),
  );
  // scores = If(u_star) then logits else -logits: the branches read the outer `logits`
  const branch = (op: string, out: string): GraphProto =>
    create(GraphProtoSchema, {
      name: `${op}_branch`,
      node: [
        create(NodeProtoSchema, { name: `${op}_in_branch`, opType: op, input: [STEP_OUTPUTS.logits], output: [out] }),
      ],
      output: [valueInfo(out, 'float', ['N', K])],
    });
  const graph = model.graph!;
  graph.initializer.push(tensor(STEP_OUTPUTS.uStar, 'bool', [], [1]));
  graph.node.push(
    create(NodeProtoSchema, {
      name: 'choose',
      opType: 'If',
      input: [STEP_OUTPUTS.uStar],
      output: ['scores'],
      attribute: [
        { name: 'then_branch', type: AttributeProto_AttributeType.GRAPH, g: branch('Identity', STEP_OUTPUTS.gNext) },
        { name: 'else_branch', type: AttributeProto_AttributeType.GRAPH, g: branch('Neg', 'negated') },
      ],
    }),
  );
  return toBinary(ModelProtoSchema, model);
}

/** The classifier with its logits through a Softmax, output `probs` (what a model exported for serving gives). */
function probsModel(): Uint8Array {
  return buildOnnxModel({
    inputs: [{ name: 'x', shape: ['N', 1, 28, 28] }],
    outputs: [{ name: 'probs', shape: ['N', K] }],
    nodes: [
      { op: 'Flatten', inputs: ['x'], outputs: ['flat'], attributes: { axis: 1 } },
      { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
      { op: 'Add', inputs: ['product', 'b'], outputs: ['logits'] },
      { op: 'Softmax', inputs: ['logits'], outputs: ['probs'], attributes: { axis: -1 } },
    ],
    initializers: [
      { name: 'W', dims: [784, K], values: weights.weights },
      { name: 'b', dims: [K], values: weights.bias },
    ],
  });
}

function withOpset(bytes: Uint8Array, opset: number): Uint8Array {
  const model = fromBinary(ModelProtoSchema, bytes);
  model.opsetImport = [{ ...model.opsetImport[0]!, version: BigInt(opset) }];
  return toBinary(ModelProtoSchema, model);
}

interface Case {
  name: string;
  files: Uint8Array[];
  contract: 'single-classifier' | 'two-classifiers';
  rule?: 'entropy' | 'margin';
  inputName?: string;
}

const CASES: Case[] = [
  { name: 'logits', files: [linearClassifier({ ...weights, outputName: 'logits' })], contract: 'single-classifier' },
  {
    name: 'output',
    files: [linearClassifier({ ...weights, outputName: 'output' })],
    contract: 'single-classifier',
    rule: 'margin',
  },
  { name: 'probs', files: [probsModel()], contract: 'single-classifier' },
  { name: 'colliding', files: [collidingModel()], contract: 'single-classifier', rule: 'margin', inputName: 'frames' },
  {
    name: 'pair',
    files: [
      linearClassifier({ ...weights, outputName: 'logits' }),
      linearClassifier({ ...sharper, outputName: 'logits' }),
    ],
    contract: 'two-classifiers',
  },
];

/** --model (--second-model) and the contract's options of a case whose files are written in `dir`. */
function modelArgs(c: Case): string[] {
  const paths = c.files.map((bytes, i) => {
    const path = join(dir, `${c.name}-${i}.onnx`);
    writeFileSync(path, bytes);
    return path;
  });
  return [
    '--model',
    paths[0]!,
    ...(paths.length > 1 ? ['--second-model', paths[1]!] : []),
    '--contract',
    c.contract,
    ...(c.contract === 'single-classifier' ? ['--t0', '2', '--u-rule', c.rule ?? 'entropy'] : []),
    '--input',
    JSON.stringify({ ...GREY_28X28_INPUT, name: c.inputName ?? 'x' }),
  ];
}

/** knob run over the embedded stream with shot noise, then knob export of that recording: the bundle's path. */
async function exportCase(c: Case): Promise<string> {
  const args = modelArgs(c);
  const run = join(dir, `${c.name}-run`);
  const recorded = await knob(
    'run',
    ...args,
    '--source',
    'default',
    '--limit',
    '120',
    '--corrupt',
    'shot_noise',
    '--severity',
    '4',
    '--out',
    run,
  );
  expect(recorded.status, recorded.stderr).toBe(0);
  const bundle = join(dir, `${c.name}.knob.zip`);
  const exported = await knob('export', '--trace', join(run, 'trace.arrow'), ...args, '--out', bundle);
  expect(exported.status, exported.stderr).toBe(0);
  return bundle;
}

const bundles = new Map<string, string>();

beforeAll(async () => {
  for (const c of CASES) bundles.set(c.name, await exportCase(c));
}, 240_000);

/** The step graph's model, read from a bundle. */
async function stepGraphOf(bundle: string) {
  const members = await readArchive(readFileSync(bundle), bundle);
  const bytes = members.get('deploy/step.onnx');
  expect(bytes, 'the bundle has deploy/step.onnx').toBeDefined();
  return fromBinary(ModelProtoSchema, bytes!);
}

describe('models named like the step graph get one, equal to the app', () => {
  for (const c of CASES)
    it(`${c.name} (${c.contract}): knob verify exits 0 with the equivalence within tolerance`, async () => {
      const bundle = bundles.get(c.name)!;
      const graph = (await stepGraphOf(bundle)).graph!;
      // the deployment contract's names, unchanged
      expect(graph.input.map((v) => v.name)).toEqual(Object.values(STEP_INPUTS));
      expect(graph.output.map((v) => v.name)).toEqual(Object.values(STEP_OUTPUTS));
      const result = await knob('verify', bundle);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.split('\n')[0]).toBe(`${bundle}: sound`);
      const within = /equivalence: step graph = app within (\S+) on 24 frames/.exec(result.stdout);
      expect(within, result.stdout).not.toBeNull();
      expect(Number(within![1])).toBeLessThan(EQUIVALENCE_TOLERANCE);
    }, 60_000);

  it("renames the model's values, not the step graph's: `logits` inside the model is model/logits", async () => {
    const graph = (await stepGraphOf(bundles.get('logits')!)).graph!;
    const add = graph.node.find((n) => n.opType === 'Add' && n.input.includes('b'));
    expect(add?.output).toEqual(['model/logits']);
    // and the step graph's own `logits` output is written by one node, the step graph's
    expect(graph.node.filter((n) => n.output.includes(STEP_OUTPUTS.logits)).map((n) => n.opType)).toEqual(['Cast']);
  });

  it('renames inside an If body too, and past a name the model already has (model/logits taken: model/logits_1)', async () => {
    const graph = (await stepGraphOf(bundles.get('colliding')!)).graph!;
    const names = graph.node.flatMap((n) => n.output);
    expect(names).toEqual(expect.arrayContaining(['model/probabilities', 'model/knob::MatMul_0', 'model/logits_1']));
    expect(graph.initializer.map((t) => t.name)).toEqual(
      expect.arrayContaining(['model/gate', 'model/logits', 'model/u_star']),
    );
    const choose = graph.node.find((n) => n.opType === 'If')!;
    expect(choose.input).toEqual(['model/u_star']);
    const then = choose.attribute.find((a) => a.name === 'then_branch')!.g!;
    expect(then.node[0]!.input).toEqual(['model/logits_1']);
    expect(then.output[0]!.name).toBe('model/g_next');
  });

  it('two classifiers that both name their output logits: the second under second::, the first moved to model/', async () => {
    const graph = (await stepGraphOf(bundles.get('pair')!)).graph!;
    const names = graph.node.flatMap((n) => n.output);
    expect(names).toEqual(expect.arrayContaining(['model/logits', 'second::logits', 'second::flat']));
  });
});

/** The bundle of a case with its members and manifest changed, written beside it. */
async function tampered(
  from: string,
  name: string,
  change: (members: Map<string, Uint8Array>, manifest: BundleManifest) => void,
): Promise<string> {
  const members = await readArchive(readFileSync(from), from);
  const manifest = JSON.parse(new TextDecoder().decode(members.get('manifest.json')!)) as BundleManifest;
  change(members, manifest);
  for (const path of Object.keys(manifest.members)) if (!members.has(path)) delete manifest.members[path];
  members.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
  const path = join(dir, name);
  writeFileSync(path, writeArchive([...members].map(([p, bytes]) => ({ path: p, bytes }))));
  return path;
}

describe('knob verify holds a bundle to the step graph export promises', () => {
  it('the step graph member removed (the manifest still names it): exit 1, one line naming it', async () => {
    const path = await tampered(bundles.get('logits')!, 'no-member.knob.zip', (members) => {
      members.delete('deploy/step.onnx');
    });
    expect(knobFailureLine(await knob('verify', path))).toMatch(
      /names the step graph 'deploy\/step\.onnx', which is not a member of the bundle/,
    );
  });

  it('the manifest rewritten to say there is none, as an export that refused the names said: exit 1', async () => {
    const path = await tampered(bundles.get('logits')!, 'said-none.knob.zip', (members, manifest) => {
      for (const member of [...members.keys()])
        if (member.startsWith('deploy/') && member !== 'deploy/README.md') members.delete(member);
      manifest.deploy = {
        ...manifest.deploy,
        stepGraph: null,
        triton: null,
        stepGraphNote: "no step graph: the model has a value named 'logits', which the step graph needs for its own",
      };
    });
    const line = knobFailureLine(await knob('verify', path));
    expect(line).toMatch(/the bundle has no step graph, but export builds one for its model and settings/);
    expect(line).toMatch(/a value named 'logits'/);
  });

  it("the Triton repository's model removed: exit 1", async () => {
    const path = await tampered(bundles.get('output')!, 'no-triton.knob.zip', (members, manifest) => {
      members.delete(`deploy/triton/${manifest.name}/1/model.onnx`);
    });
    expect(knobFailureLine(await knob('verify', path))).toMatch(/1\/model\.onnx' is missing or not the step graph/);
  });

  it('a model the builder refuses (opset 12) has none: verify passes and says equivalence was not checked and why', async () => {
    const c: Case = {
      name: 'opset12',
      files: [withOpset(linearClassifier({ ...weights, outputName: 'logits' }), 12)],
      contract: 'single-classifier',
    };
    const bundle = await exportCase(c);
    const result = await knob('verify', bundle);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(`${bundle}: sound (equivalence not checked)`);
    expect(result.stdout).toMatch(/equivalence: not checked \(no step graph: the model uses ONNX opset 12/);
  }, 60_000);
});
