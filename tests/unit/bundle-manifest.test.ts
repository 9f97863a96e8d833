/**
 * The bundle manifest's schema (src-shared/bundle/bundle-manifest.ts) and the JSON Schema every
 * bundle ships beside it: a real JSON Schema validator (ajv, draft 2020-12) accepts a manifest the
 * app writes and rejects the same faults the app rejects, so a consumer in another language can
 * check manifests without Knob Studio. Format versions: any minor of major 1 is read, a newer major
 * is refused with a message that says to update, before its fields are looked at.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  BUNDLE_FORMAT_VERSION,
  bundleManifestJsonSchema,
  parseBundleManifest,
  type BundleManifest,
} from '../../src-shared/bundle/bundle-manifest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { GREY_28X28_INPUT } from '../support/onnx-builder';

const hash = 'ab'.repeat(32);
const manifest: BundleManifest = {
  format: 'knob-bundle',
  formatVersion: BUNDLE_FORMAT_VERSION,
  name: 'tuned',
  createdAt: '2026-12-01T03:00:00.000Z',
  gate: DEFAULT_GATE_SETTINGS,
  timing: { frameRateHz: 30, irregularIntervals: 'coefficients from each frame interval dt' },
  model: {
    contract: 'knob-native',
    files: [{ fileName: 'knob-fmnist.onnx', member: 'model/knob-fmnist.onnx', sha256: hash, bytes: 559133 }],
    adapter: null,
    classCount: 10,
    labels: Array.from({ length: 10 }, (_, i) => `class ${i}`),
    input: GREY_28X28_INPUT,
  },
  calibrator: { method: 'temperature', temperature: 1.4 },
  deploy: {
    stepGraph: 'deploy/step.onnx',
    stepGraphNote: null,
    triton: { root: 'deploy/triton', modelName: 'tuned' },
    readme: 'deploy/README.md',
  },
  report: { metrics: 'report/metrics.json', html: 'report/report.html' },
  provenance: {
    appVersion: '0.1.0',
    source: 'embedded',
    sourceIdentity: null,
    classMapping: null,
    origin: 'test',
    frames: 300,
    traceSha256: hash,
  },
  members: { 'model/knob-fmnist.onnx': { sha256: hash, bytes: 559133 } },
};

describe('the bundle manifest', () => {
  const validate = new Ajv2020({ strict: false }).compile(bundleManifestJsonSchema());

  it('its JSON Schema accepts what the app writes, and what the app reads', () => {
    expect(validate(manifest), JSON.stringify(validate.errors)).toBe(true);
    expect(parseBundleManifest(structuredClone(manifest), 'x.knob.zip')).toEqual(manifest);
  });

  const faults: Array<[string, (m: Record<string, unknown>) => void]> = [
    ['a missing field', (m) => delete m['gate']],
    ['an unknown field', (m) => (m['extra'] = 1)],
    ['a SHA-256 that is not 64 hex digits', (m) => ((m['provenance'] as { traceSha256: string }).traceSha256 = 'abc')],
    ['an absolute member path', (m) => ((m['deploy'] as { readme: string }).readme = '/etc/passwd')],
    ['zeta out of range', (m) => ((m['gate'] as { zeta: number }).zeta = -1)],
    ['a name that cannot name a file', (m) => (m['name'] = '../evil')],
  ];
  for (const [what, fault] of faults) {
    it(`both refuse ${what}`, () => {
      const broken = structuredClone(manifest) as unknown as Record<string, unknown>;
      fault(broken);
      expect(validate(broken)).toBe(false);
      expect(() => parseBundleManifest(broken, 'x.knob.zip')).toThrow(/x\.knob\.zip: invalid manifest/);
    });
  }

  it('reads a later minor version, refuses a later major one by name', () => {
    expect(parseBundleManifest({ ...manifest, formatVersion: '1.7' }, 'x.knob.zip').formatVersion).toBe('1.7');
    expect(() => parseBundleManifest({ ...manifest, formatVersion: '2.0', newField: {} }, 'x.knob.zip')).toThrow(
      /x\.knob\.zip: bundle format 2\.0 is newer than this Knob Studio reads \(1\.x\); update Knob Studio/,
    );
    expect(() => parseBundleManifest({ format: 'something-else' }, 'x.knob.zip')).toThrow(
      /not a Knob Studio bundle manifest/,
    );
  });
});
