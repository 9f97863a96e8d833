/**
 * Hostile archives against the bundle reader (src-main/core/bundle/bundle-archive.ts), each
 * refused with its own message before anything is inflated or written: path traversal, absolute
 * paths, symbolic links, duplicate names (and names that differ only in case), an entry larger
 * than it declares, per-entry and total sizes over the limits, a compression ratio over the
 * limit, too many entries; extraction writes nothing outside the target folder, even through a
 * link planted inside it. A sound archive round-trips byte for byte.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Zip, ZipDeflate, ZipPassThrough, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import {
  archiveLimits,
  extractArchive,
  readArchive,
  writeArchive,
  type ArchiveLimits,
} from '../../src-main/core/files/zip-archive';

const text = (s: string) => new TextEncoder().encode(s);

/** An archive with entries in the given order, duplicates allowed (fflate's streaming writer). */
function zipOf(entries: Array<{ name: string; bytes: Uint8Array; attrs?: number; store?: boolean }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const zip = new Zip((error, chunk) => {
    if (error) throw error;
    chunks.push(chunk);
  });
  for (const { name, bytes, attrs, store } of entries) {
    const file = store ? new ZipPassThrough(name) : new ZipDeflate(name, { level: 1 });
    if (attrs !== undefined) Object.assign(file, { os: 3, attrs });
    zip.add(file);
    file.push(bytes, true);
  }
  zip.end();
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const refused = (bytes: Uint8Array, message: RegExp, limits?: ArchiveLimits) =>
  expect(readArchive(bytes, 'evil.knob.zip', limits === undefined ? {} : { limits })).rejects.toThrow(message);

describe('the bundle reader refuses', () => {
  it('path traversal', () =>
    refused(
      zipOf([{ name: 'report/../../evil.txt', bytes: text('x') }]),
      /evil\.knob\.zip: entry 'report\/\.\.\/\.\.\/evil\.txt' leaves the archive \(path traversal\)/,
    ));

  it('absolute paths, Unix and Windows', async () => {
    await refused(zipOf([{ name: '/etc/evil', bytes: text('x') }]), /entry '\/etc\/evil' has an absolute path/);
    await refused(zipOf([{ name: 'C:/evil', bytes: text('x') }]), /entry 'C:\/evil' has an absolute path/);
    await refused(zipOf([{ name: 'a\\..\\evil', bytes: text('x') }]), /has a backslash in its path/);
  });

  it('symbolic links', () =>
    refused(
      zipOf([{ name: 'deploy/model.onnx', bytes: text('/etc/passwd'), attrs: (0o120777 << 16) >>> 0, store: true }]),
      /entry 'deploy\/model\.onnx' is a symbolic link/,
    ));

  it('duplicate names, and names that differ only in case', async () => {
    await refused(
      zipOf([
        { name: 'manifest.json', bytes: text('{}') },
        { name: 'manifest.json', bytes: text('{"evil":1}') },
      ]),
      /entry 'manifest\.json' appears twice/,
    );
    await refused(
      zipOf([
        { name: 'manifest.json', bytes: text('{}') },
        { name: 'MANIFEST.json', bytes: text('{}') },
      ]),
      /entries 'manifest\.json' and 'MANIFEST\.json' differ only in case/,
    );
  });

  it('an entry larger than it declares (the declared size patched down in both headers)', async () => {
    const bytes = zipSync({ 'report/metrics.json': [new Uint8Array(100_000).fill(7), { level: 6 }] });
    const view = new DataView(bytes.buffer);
    // local header: uncompressed size at 22; central directory entry (signature 0x02014b50): at 24
    view.setUint32(22, 1000, true);
    const central = bytes.findIndex((_, i) => i + 4 <= bytes.length && view.getUint32(i, true) === 0x02014b50);
    view.setUint32(central + 24, 1000, true);
    await refused(bytes, /entry 'report\/metrics\.json' is larger than the 1000 bytes it declares/);
  });

  it('an entry, or all of them together, over the size limits', async () => {
    const limits = { ...archiveLimits(), maxEntryBytes: 1000, maxTotalBytes: 1500 };
    await refused(
      zipOf([{ name: 'big.bin', bytes: new Uint8Array(1001) }]),
      /entry 'big\.bin' unpacks to more than 1000 bytes \(1001; raise it with --input-limit decompressed=SIZE\)/,
      limits,
    );
    await refused(
      zipOf([
        { name: 'a.bin', bytes: new Uint8Array(800) },
        { name: 'b.bin', bytes: new Uint8Array(800) },
      ]),
      /unpacks to more than 1500 bytes in all \(entry 'b\.bin'/,
      limits,
    );
  });

  it('a compression ratio over the limit (a zip bomb that declares its size honestly)', () =>
    refused(
      zipOf([{ name: 'zeros.bin', bytes: new Uint8Array(24 << 20) }]),
      /entry 'zeros\.bin' unpacks \d+ times its packed size, over the limit of 100/,
    ));

  it('too many entries', () =>
    refused(
      zipOf(Array.from({ length: 6 }, (_, i) => ({ name: `f${i}.txt`, bytes: text(String(i)) }))),
      /holds more than 5 entries \(raise it with --input-limit entries=COUNT\)/,
      { ...archiveLimits(), maxEntries: 5 },
    ));

  it('bytes that are not a zip archive', () => refused(text('PK but not really a zip'), /not a readable zip archive/));
});

describe('extraction', () => {
  it('writes nothing when a check fails, and nothing outside the target, even through a planted link', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'knob-extract-'));
    const target = join(parent, 'target');
    mkdirSync(target);
    await expect(
      extractArchive(zipOf([{ name: '../outside.txt', bytes: text('x') }]), 'evil.knob.zip', target),
    ).rejects.toThrow(/path traversal/);
    await expect(
      extractArchive(
        zipOf([
          { name: 'ok.txt', bytes: text('fine') },
          { name: '/abs.txt', bytes: text('x') },
        ]),
        'evil.knob.zip',
        target,
      ),
    ).rejects.toThrow(/absolute path/);
    expect(readdirSync(target)).toEqual([]); // not even the sound member before it
    // a link inside the target pointing out of it
    const elsewhere = join(parent, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(target, 'deploy'));
    await expect(
      extractArchive(zipOf([{ name: 'deploy/model.onnx', bytes: text('x') }]), 'evil.knob.zip', target),
    ).rejects.toThrow(/entry 'deploy\/model\.onnx' would be written outside/);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(existsSync(join(parent, 'outside.txt'))).toBe(false);
  });
});

describe('a sound archive', () => {
  it('round-trips byte for byte, the same bytes every time', async () => {
    const members = [
      { path: 'manifest.json', bytes: text('{"format":"knob-bundle"}') },
      { path: 'deploy/step.onnx', bytes: Uint8Array.from({ length: 5000 }, (_, i) => (i * 31) % 256) },
      { path: 'report/figure.png', bytes: Uint8Array.from({ length: 300 }, (_, i) => i % 7) },
    ];
    const bytes = writeArchive(members);
    expect(writeArchive(members)).toEqual(bytes);
    const read = await readArchive(bytes, 'sound.knob.zip');
    expect([...read.keys()]).toEqual(members.map((m) => m.path));
    for (const m of members) expect(read.get(m.path)).toEqual(m.bytes);
    const target = mkdtempSync(join(tmpdir(), 'knob-extract-'));
    await extractArchive(bytes, 'sound.knob.zip', target);
    expect(readFileSync(join(target, 'deploy', 'step.onnx'))).toEqual(Buffer.from(members[1]!.bytes));
  });
});
