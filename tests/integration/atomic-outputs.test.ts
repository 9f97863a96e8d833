/**
 * Outputs are all or nothing: a failure injected at each output file (a folder standing where the
 * file must go) leaves the output folder exactly as it was, through the CLI (knob replay) and the
 * API (bundle.export, trace.save); an output folder under a path that is not a folder is refused
 * before anything is created; a run that stopped part-way says so in metrics.json and the report.
 * A file written from its chunks (a trace is, so that it is never held twice) is their bytes. A
 * group cancelled while it is written replaces nothing.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { outputLength, writeOutputFile, writeOutputFiles } from '../../src-main/core/files/output-files';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';

const dir = mkdtempSync(join(tmpdir(), 'knob-atomic-'));
const RUN = join(dir, 'run');
let backend: KnobBackend;

function knob(...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, ['bin/knob.mjs', ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr };
}

/** Every file and folder below `root` with its content: what "as it was" means. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string): void => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const key = relative(root, path);
      if (statSync(path).isDirectory()) {
        out[`${key}/`] = 'folder';
        walk(path);
      } else out[key] = readFileSync(path).toString('base64');
    }
  };
  walk(root);
  return out;
}

beforeAll(async () => {
  const made = knob('run', '--source', 'default', '--limit', '60', '--out', RUN);
  expect(made.status, made.stderr).toBe(0);
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', { kind: 'embedded' });
  await backend.handle('stream.runOffline', { maxFrames: 40 });
}, 120_000);
afterAll(async () => backend?.close());

describe('outputs are all or nothing', () => {
  for (const name of ['trace.arrow', 'metrics.json', 'report.html']) {
    it(`knob replay: a failure at ${name} leaves the output folder as it was`, () => {
      const out = join(dir, `replay-${name}`);
      cpSync(RUN, out, { recursive: true });
      // The file cannot be replaced: a folder (with something in it) stands at its name.
      const blocked = join(out, name);
      spawnSync('rm', ['-f', blocked]);
      mkdirSync(blocked);
      writeFileSync(join(blocked, 'keep.txt'), 'kept');
      const before = snapshot(out);
      const result = knob('replay', join(RUN, 'trace.arrow'), '--zeta', '0.3', '--out', out);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^knob: ${blocked.replace(/[.]/g, '\\.')}: is a folder`, 'm'));
      expect(snapshot(out)).toEqual(before);
    });
  }

  it('knob replay into a new folder under a file: refused, nothing created', () => {
    const parent = join(dir, 'not-a-folder');
    writeFileSync(parent, 'a file');
    const result = knob('replay', join(RUN, 'trace.arrow'), '--out', join(parent, 'a', 'b'));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/not-a-folder: is not a folder, so nothing can be written in it/);
    expect(readFileSync(parent, 'utf8')).toBe('a file');
  });

  it('bundle.export onto a folder is refused, and the folder is untouched', async () => {
    const target = join(dir, 'taken.knob.zip');
    mkdirSync(target);
    writeFileSync(join(target, 'previous.txt'), 'an earlier export');
    const before = snapshot(target);
    await expect(backend.handle('bundle.export', { path: target })).rejects.toThrow(
      `${target}: is a folder, so the output file cannot be written there`,
    );
    expect(snapshot(target)).toEqual(before);
  });

  it('an export that succeeds writes the bundle and nothing temporary beside it', async () => {
    const folder = join(dir, 'export-ok', 'nested');
    mkdirSync(folder, { recursive: true });
    const result = await backend.handle('bundle.export', { path: join(folder, 'tuned.knob.zip') });
    expect(readdirSync(folder)).toEqual(['tuned.knob.zip']);
    expect(result.members).toBeGreaterThan(10);
    expect(result.deploy).toBe('step graph and Triton repository');
  });

  it('bundle.export refuses a name that is not NAME.knob.zip', async () => {
    await expect(backend.handle('bundle.export', { path: join(dir, 'tuned.zip') })).rejects.toThrow(/NAME\.knob\.zip/);
    // a folder (what the Export panel's placeholder once suggested) is told what to give instead
    await expect(backend.handle('bundle.export', { path: dir })).rejects.toThrow(
      /a file named NAME\.knob\.zip \(not a folder\)/,
    );
  });

  it('trace.save onto a folder is refused, and the folder is untouched', async () => {
    const target = join(dir, 'saved.arrow');
    mkdirSync(target);
    await expect(backend.handle('trace.save', { path: target })).rejects.toThrow(/saved\.arrow: is a folder/);
    expect(readdirSync(target)).toEqual([]);
  });

  it('a file written from its chunks is their bytes in order, across many writes', async () => {
    // chunks of every size from 0 on, more than one writev takes at once
    const chunks = Array.from({ length: 700 }, (_, i) =>
      Uint8Array.from({ length: i % 37 }, (_, j) => (i * 31 + j) & 255),
    );
    const path = await writeOutputFile(join(dir, 'chunked.bin'), chunks);
    expect(Buffer.compare(readFileSync(path), Buffer.concat(chunks))).toBe(0);
    expect(outputLength(chunks)).toBe(statSync(path).size);
    // a trace saved from the desk is written from its chunks: the same bytes as encoded whole
    const saved = join(dir, 'saved-whole.arrow');
    await backend.handle('trace.save', { path: saved });
    const { trace, run, context } = await readTraceFile(saved);
    expect(Buffer.compare(readFileSync(saved), encodeTraceFile(trace, run, context))).toBe(0);
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('a group cancelled while it is written replaces nothing and leaves nothing temporary', async () => {
    const folder = join(dir, 'cancelled');
    mkdirSync(folder);
    writeFileSync(join(folder, 'model.onnx'), 'the model before');
    const before = snapshot(folder);
    const controller = new AbortController();
    // the cancel arrives while the first file's bytes are on their way
    const written = writeOutputFiles(
      folder,
      [
        { name: 'model.onnx', data: new Uint8Array(1 << 20) },
        { name: 'model.card.json', data: '{}' },
      ],
      { signal: controller.signal, what: 'making the Knob model' },
    );
    controller.abort();
    await expect(written).rejects.toThrow(/making the Knob model was cancelled/);
    expect(snapshot(folder)).toEqual(before);
  });
});
