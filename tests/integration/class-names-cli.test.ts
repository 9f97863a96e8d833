/**
 * Class names on the user's own data, through the real `knob run` and the shipped model (issue 27):
 * an ImageFolder whose sorted folder order is not the model's label order is labelled by name; a
 * folder name the model does not know is refused with both sets listed; `--class-map` maps it; the
 * mapping and the folder's hash are kept in the trace's provenance and shown in the report.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { storedProvenanceOf } from '../../src-main/core/report/provenance';
import { FASHION_MNIST_LABELS } from '../../src-main/core/datasets/embedded-dataset';
import { fashionMnistSample } from '../support/fashion-mnist';
import { knob, knobFailureLine } from '../support/knob-cli';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';

const dir = mkdtempSync(join(tmpdir(), 'knob-class-names-'));
const sample = fashionMnistSample(200);

function png(image: Uint8Array): Buffer {
  const file = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  file.data = Buffer.from(image);
  return PNG.sync.write(file, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
}

/** An ImageFolder of `perClass` real test images of each class, under the folder names given. */
function imageFolder(name: string, folders: Record<string, number>, perClass = 6): string {
  const root = join(dir, name);
  for (const [folder, classIndex] of Object.entries(folders)) {
    mkdirSync(join(root, folder), { recursive: true });
    const indices = sample.labels.flatMap((label, i) => (label === classIndex ? [i] : [])).slice(0, perClass);
    for (const i of indices) writeFileSync(join(root, folder, `${i}.png`), png(sample.images[i]!));
  }
  return root;
}

async function runLabels(
  out: string,
): Promise<{ labels: number[]; predictions: number[]; context: Record<string, unknown> }> {
  const file = await readTraceFile(join(out, 'trace.arrow'));
  const labels = Array.from(file.trace.labels ?? []);
  const k = file.trace.classCount;
  const predictions = labels.map((_, i) => {
    const row = file.trace.zStatic.subarray(i * k, (i + 1) * k);
    return row.indexOf(Math.max(...row));
  });
  return { labels, predictions, context: file.context };
}

describe('class names by name through knob run', () => {
  it('an ImageFolder whose folder order differs from the model label order is labelled by name', async () => {
    // sorted: Ankle_boot, bag, trouser; by position that would be T-shirt/top, Trouser, Pullover
    const root = imageFolder('by-name', { trouser: 1, Ankle_boot: 9, bag: 8 });
    const out = join(dir, 'by-name-out');
    const result = await knob('run', '--model', 'default', '--source', root, '--out', out, '--json');
    expect(result.status, result.stderr).toBe(0);
    const { labels, predictions, context } = await runLabels(out);
    expect(labels).toEqual([...Array(6).fill(9), ...Array(6).fill(8), ...Array(6).fill(1)]);
    // the labels are the images' true classes: the shipped model agrees with nearly all of them
    expect(predictions.filter((p, i) => p === labels[i]).length).toBeGreaterThanOrEqual(15);
    const provenance = storedProvenanceOf(context)!;
    expect(provenance.classMapping).toEqual({
      rule: 'by-name',
      pairs: [
        { sourceName: 'Ankle_boot', modelIndex: 9, modelLabel: FASHION_MNIST_LABELS[9] },
        { sourceName: 'bag', modelIndex: 8, modelLabel: 'Bag' },
        { sourceName: 'trouser', modelIndex: 1, modelLabel: 'Trouser' },
      ],
    });
    expect(provenance.sourceIdentity).toMatchObject({ kind: 'folder', name: 'by-name', fileCount: 18 });
    const sha = (provenance.sourceIdentity as { sha256: string }).sha256;
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain(sha);
    expect(report).toContain('Ankle_boot -&gt; Ankle boot (9)');
    expect(report).toContain('18 (18 labelled): source frames 0 to 17'); // the slice of the source used

    // the bundle names the source too: in its manifest and in the report it carries
    const bundle = join(dir, 'by-name.knob.zip');
    const exported = await knob('export', '--trace', join(out, 'trace.arrow'), '--model', 'default', '--out', bundle);
    expect(exported.status, exported.stderr).toBe(0);
    const { manifest, members } = await readVerifiedBundle(readFileSync(bundle), bundle);
    expect(manifest.provenance.sourceIdentity).toEqual(provenance.sourceIdentity);
    expect(manifest.provenance.classMapping).toEqual(provenance.classMapping);
    expect(new TextDecoder().decode(members.get(manifest.report!.html)!)).toContain(sha);
  }, 120_000);

  it('a folder name the model does not know is refused, listing both sets; --class-map maps it', async () => {
    const root = imageFolder('unknown', { kitty: 6, Bag: 8 }, 3);
    const refused = await knob('run', '--model', 'default', '--source', root, '--out', join(dir, 'refused'));
    const line = knobFailureLine(refused);
    expect(line).toContain("class names the model does not know: 'kitty'");
    expect(line).toContain("'T-shirt/top', 'Trouser'");

    const map = join(dir, 'classes.txt');
    writeFileSync(map, '# the field set calls shirts kitty\nkitty -> shirt\n');
    const out = join(dir, 'mapped-out');
    const mapped = await knob(
      'run',
      '--model',
      'default',
      '--source',
      root,
      '--class-map',
      map,
      '--out',
      out,
      '--json',
    );
    expect(mapped.status, mapped.stderr).toBe(0);
    const { labels, context } = await runLabels(out);
    expect(labels).toEqual([8, 8, 8, 6, 6, 6]);
    expect(storedProvenanceOf(context)!.classMapping!.rule).toBe('class-map');

    const notAFolder = await knob(
      'run',
      '--model',
      'default',
      '--source',
      'default',
      '--class-map',
      map,
      '--limit',
      '5',
      '--out',
      join(dir, 'nf'),
    );
    expect(knobFailureLine(notAFolder)).toMatch(/a class map applies to a folder source/);
  });

  it('a model without label metadata takes the folders in sorted order, and says so', async () => {
    const root = imageFolder('no-metadata', { sneaker: 7, bag: 8 }, 2);
    const model = join(dir, 'plain.onnx');
    writeFileSync(model, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
    const out = join(dir, 'no-metadata-out');
    const result = await knob('run', '--model', model, '--source', root, '--out', out);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /classes: 2 classes taken in sorted order as classes 0, 1, \.\.\. \(the model has no label metadata\): bag -> class 0 \(0\), sneaker -> class 1 \(1\)/,
    );
    expect(result.stderr).toMatch(/source: no-metadata \(4 files, \d+ bytes, SHA-256 of the file list [0-9a-f]{64}\)/);
    expect((await runLabels(out)).labels).toEqual([0, 0, 1, 1]);
  });

  it('a manifest: names by name, numbers only as indices under a label_index column', async () => {
    const root = join(dir, 'manifest');
    mkdirSync(root);
    const rows = [0, 1, 2, 3].map((i) => {
      writeFileSync(join(root, `${i}.png`), png(sample.images[i]!));
      return { file: `${i}.png`, label: sample.labels[i]! };
    });
    writeFileSync(
      join(root, 'manifest.csv'),
      `path,label\n${rows.map((r) => `${r.file},${FASHION_MNIST_LABELS[r.label]!.toUpperCase()}`).join('\n')}\n`,
    );
    const out = join(dir, 'manifest-out');
    expect((await knob('run', '--model', 'default', '--source', root, '--out', out, '--json')).status).toBe(0);
    expect((await runLabels(out)).labels).toEqual(rows.map((r) => r.label));

    writeFileSync(join(root, 'manifest.csv'), `path,label\n${rows.map((r) => `${r.file},${r.label}`).join('\n')}\n`);
    const numbers = await knob('run', '--model', 'default', '--source', root, '--out', join(dir, 'numbers'));
    expect(knobFailureLine(numbers)).toMatch(/class names the model does not know: '9'/);

    writeFileSync(
      join(root, 'manifest.csv'),
      `path,label_index\n${rows.map((r) => `${r.file},${r.label}`).join('\n')}\n`,
    );
    const indexOut = join(dir, 'index-out');
    expect((await knob('run', '--model', 'default', '--source', root, '--out', indexOut, '--json')).status).toBe(0);
    expect((await runLabels(indexOut)).labels).toEqual(rows.map((r) => r.label));
  });
});
