/**
 * Text read from files, reports and API answers have size limits (issue 26: a 20 MB label made a
 * 360 MB report and one 360 MB WebSocket message). A 20 MB label in a model's ONNX metadata and in
 * an image folder's CSV manifest is refused as the file is read, naming the file and the field; a
 * settings file whose model field is too long likewise; the report page and one API answer refuse
 * to be built past their limits with a typed error naming what was too large.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkResponseSize, jsonBytesAtMost, MAX_RESPONSE_BYTES } from '../../src-main/core/api/message-size';
import { readSettingsFile } from '../../src-main/core/recording/settings-file';
import { MAX_REPORT_BYTES, reportPageFiles } from '../../src-main/core/report/html-document';
import { openImageFolderSource } from '../../src-main/core/sources/dataset-sources';
import { KnobError } from '../../src-shared/errors';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { measuredKnob } from '../support/measured-knob';
import { linearClassifier } from '../support/onnx-builder';

const dir = mkdtempSync(join(tmpdir(), 'knob-text-limits-'));
const LONG_LABEL = 'x'.repeat(20 * 1024 * 1024);

async function knobError(promise: Promise<unknown> | (() => unknown)): Promise<KnobError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    if (error instanceof KnobError) return error;
    throw error;
  }
  throw new Error('expected a KnobError');
}

describe('text fields read from files', () => {
  it("a 20 MB label in a model's ONNX metadata: knob run refuses it naming the model and the label, peak under 512 MB", () => {
    const model = join(dir, 'long-label.onnx');
    const labels = [LONG_LABEL, ...Array.from({ length: 9 }, (_, i) => `class ${i + 1}`)];
    writeFileSync(
      model,
      linearClassifier({
        weights: new Float32Array(784 * 10),
        bias: new Float32Array(10),
        metadata: { 'knob.labels': JSON.stringify(labels) },
      }),
    );
    const result = measuredKnob([
      'run',
      '--model',
      model,
      '--source',
      'default',
      '--limit',
      '4',
      '--out',
      join(dir, 'out'),
    ]);
    expect(result.status).toBe(1);
    expect(result.line).toContain(
      `${model}: label name 0 (metadata) is 20971520 characters long, over the limit of 4096`,
    );
    expect(result.peakMb).toBeLessThan(512);
  }, 120_000);

  it("a 20 MB label in an image folder's CSV manifest", async () => {
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    writeFileSync(join(folder, 'manifest.csv'), `path,label\na.png,${LONG_LABEL}\n`);
    const error = await knobError(openImageFolderSource(folder, { frameRateHz: 30 }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toBe(
      `${join(folder, 'manifest.csv')}: row 2's label is 20971520 characters long, over the limit of 4096 (raise it with --input-limit text=COUNT)`,
    );
  });

  it('a settings file whose model field is too long', async () => {
    const path = join(dir, 'knob-settings.json');
    writeFileSync(
      path,
      JSON.stringify({
        format: 'knob-settings',
        formatVersion: 1,
        gate: DEFAULT_GATE_SETTINGS,
        model: 'm'.repeat(8192),
      }),
    );
    const error = await knobError(readSettingsFile(path));
    expect(error.message).toMatch(
      /knob-settings\.json: the settings\.model is 8192 characters long, over the limit of 4096/,
    );
  });
});

describe('reports and API answers', () => {
  it('a report page past its limit is refused, naming the limit', async () => {
    const error = await knobError(() => reportPageFiles('r'.repeat(MAX_REPORT_BYTES + 1), []));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/^the report would be 32\.0 MiB, over the limit of 32 MiB/);
  });

  it('an API answer past its limit is REQUEST_TOO_LARGE naming the method, measured without serialising it', async () => {
    const answer = { labels: Array.from({ length: 20 }, () => LONG_LABEL) }; // 400 MB as JSON
    const error = await knobError(() => checkResponseSize('model.describe', answer));
    expect(error.code).toBe('REQUEST_TOO_LARGE');
    expect(error.message).toContain(`the answer to model.describe is over ${MAX_RESPONSE_BYTES} bytes`);
    expect(() =>
      checkResponseSize('recording.series', { t: Array.from({ length: 100_000 }, (_, i) => i / 30) }),
    ).not.toThrow();
  });

  it('the measure is JSON.stringify within a few per cent for ordinary answers', () => {
    const answer = {
      recordingId: 3,
      tSeconds: Array.from({ length: 5000 }, (_, i) => i / 30),
      names: ['é', 'class "1"', 'plain'],
      nested: [{ a: true, b: null }, { c: -1.5e-7 }],
    };
    const exact = Buffer.byteLength(JSON.stringify(answer), 'utf8');
    const measured = jsonBytesAtMost(answer, Number.MAX_SAFE_INTEGER);
    expect(Math.abs(measured - exact) / exact).toBeLessThan(0.05);
  });
});
