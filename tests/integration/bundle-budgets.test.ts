/**
 * Bundles are read manifest first (issue 26): manifest.json is inflated on its own limit and
 * checked before any other member; the others only if the manifest lists them, only up to the size
 * it declares, within a total budget. Each bomb below would have made `knob verify` hold a gigabyte
 * or more (a 4 MB bundle reached 2.27 GB); each is refused naming the bundle and the member, the
 * process's peak memory (its own ru_maxrss, measured-cli.mjs) under 512 MB. Member names are data:
 * 'constructor', 'toString', '__proto__' and 'hasOwnProperty' are names like any other, never
 * properties every object has (they passed `knob verify` unhashed through an `in` lookup).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArchive } from '../../src-main/core/files/zip-archive';
import { knob } from '../support/knob-cli';
import { measuredKnob } from '../support/measured-knob';
import { deflatedOnce, repeated, streamedZip, type StreamedMember } from '../support/streamed-zip';

const dir = mkdtempSync(join(tmpdir(), 'knob-bundle-budgets-'));
const soundPath = join(dir, 'sound.knob.zip');
const PEAK_LIMIT_MB = 512;
const MIB = 1024 * 1024;
/** Members of zeros at the size the per-entry ratio rule exempts: only the sum can catch them. */
const ZERO_MEMBER_BYTES = 16 * MIB;
const ZERO_BLOCK = new Uint8Array(MIB);
const ZERO_MEMBER_SHA256 = (() => {
  const hash = createHash('sha256');
  for (const block of repeated(ZERO_BLOCK, ZERO_MEMBER_BYTES / MIB)) hash.update(block);
  return hash.digest('hex');
})();

let sound: Map<string, Uint8Array>;
let manifest: { members: Record<string, { sha256: string; bytes: number }> } & Record<string, unknown>;

beforeAll(async () => {
  const run = await knob(
    'run',
    '--model',
    'default',
    '--source',
    'default',
    '--limit',
    '32',
    '--out',
    join(dir, 'run'),
  );
  expect(run.status, run.stderr).toBe(0);
  const exported = await knob(
    'export',
    '--trace',
    join(dir, 'run', 'trace.arrow'),
    '--model',
    'default',
    '--exclude-model',
    '--out',
    soundPath,
  );
  expect(exported.status, exported.stderr).toBe(0);
  sound = await readArchive(readFileSync(soundPath), soundPath);
  manifest = JSON.parse(new TextDecoder().decode(sound.get('manifest.json')));
}, 120_000);

/** The sound bundle's members, those in `replaced` with other bytes. */
const members = (replaced = new Map<string, Uint8Array>()): StreamedMember[] =>
  [...sound].map(([name, bytes]) => ({ name, chunks: [replaced.get(name) ?? bytes] }));

/** The sound bundle's members (manifest.json as given), then `extra`, written to `name`. */
function bundleWith(name: string, manifestJson: unknown, extra: StreamedMember[] = []): string {
  const path = join(dir, name);
  const manifestBytes = new TextEncoder().encode(JSON.stringify(manifestJson));
  writeFileSync(path, streamedZip([...members(new Map([['manifest.json', manifestBytes]])), ...extra]));
  return path;
}

const ZERO_MEMBER = deflatedOnce(repeated(ZERO_BLOCK, ZERO_MEMBER_BYTES / MIB));
const zeroMembers = (count: number): StreamedMember[] =>
  Array.from({ length: count }, (_, i) => ({ name: `bomb/${String(i).padStart(3, '0')}.bin`, deflated: ZERO_MEMBER }));

function expectRefused(path: string, args: string[], message: RegExp): void {
  const result = measuredKnob(['verify', path, ...args]);
  expect(result.status, result.line ?? result.stdout).toBe(1);
  expect(result.line).toMatch(new RegExp(`^knob: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `));
  expect(result.line).toMatch(message);
  expect(result.line).not.toMatch(/internal error/);
  expect(result.peakMb, `peak ${result.peakMb.toFixed(0)} MB`).toBeLessThan(PEAK_LIMIT_MB);
  console.log(`${path.split('/').pop()}: peak ${result.peakMb.toFixed(0)} MB: ${result.line}`);
}

describe(`bundle bombs, refused with peak memory under ${PEAK_LIMIT_MB} MB`, () => {
  it('64 members of 16 MiB of zeros, listed honestly in the manifest (1 GiB from about 1 MB)', () => {
    const bombs = zeroMembers(64);
    const listed = structuredClone(manifest);
    for (const bomb of bombs) listed.members[bomb.name] = { sha256: ZERO_MEMBER_SHA256, bytes: ZERO_MEMBER_BYTES };
    const path = bundleWith('honest-bomb.knob.zip', listed, bombs);
    expect(readFileSync(path).length).toBeLessThan(4 * MIB);
    expectRefused(
      path,
      [],
      /unpacks \d+ times its \d+ bytes in all by entry 'bomb\/\d{3}\.bin', over the limit of 100/,
    );
  }, 120_000);

  it('the same members unlisted, with the ratio limit raised out of the way: refused before any is inflated', () => {
    const path = bundleWith('unlisted-bomb.knob.zip', manifest, zeroMembers(64));
    expectRefused(path, ['--input-limit', 'ratio=1000000'], /member 'bomb\/000\.bin' is not listed in the manifest/);
  }, 120_000);

  it('a listed member whose zip header declares more than the manifest does', () => {
    const path = join(dir, 'grown-member.knob.zip');
    const grown = members().map((m) =>
      m.name === 'report/metrics.json' ? { ...m, chunks: repeated(ZERO_BLOCK, 16) } : m,
    );
    writeFileSync(path, streamedZip(grown));
    const declared = manifest.members['report/metrics.json']!.bytes;
    expectRefused(
      path,
      [],
      new RegExp(
        `member 'report/metrics\\.json' declares 16777216 bytes in the archive, not the ${declared} of the manifest`,
      ),
    );
  }, 120_000);

  it('a manifest over its own limit, refused before it is inflated', () => {
    const padded = new TextEncoder().encode(`${JSON.stringify(manifest)}${' '.repeat(12 * MIB)}`);
    const path = join(dir, 'huge-manifest.knob.zip');
    writeFileSync(path, streamedZip(members(new Map([['manifest.json', padded]]))));
    expectRefused(path, [], /entry 'manifest\.json' declares \d+ bytes, more than the 8388608 allowed for it/);
  }, 120_000);
});

describe('member names are data, never inherited properties', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    it(`an unlisted member named '${name}' is refused by knob verify`, async () => {
      const path = join(dir, `unlisted-${name}.knob.zip`);
      writeFileSync(path, streamedZip([...members(), { name, chunks: [new TextEncoder().encode('not hashed')] }]));
      const result = await knob('verify', path);
      expect(result.status, result.stdout).toBe(1);
      expect(result.stderr).toContain(`knob: ${path}: member '${name}' is not listed in the manifest`);
    });
  }

  for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
    it(`a listed member named '${name}' is checked by its own hash: accepted intact, refused tampered`, async () => {
      const bytes = new TextEncoder().encode(`the member ${name}`);
      const listed = structuredClone(manifest);
      listed.members[name] = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
      const intact = bundleWith(`listed-${name}.knob.zip`, listed, [{ name, chunks: [bytes] }]);
      const accepted = await knob('verify', intact);
      expect(accepted.status, accepted.stderr).toBe(0);
      expect(accepted.stdout).toMatch(/hashes: all \d+ members match their SHA-256/);
      const tampered = bundleWith(`tampered-${name}.knob.zip`, listed, [
        { name, chunks: [Uint8Array.from(bytes, (b, i) => (i === 0 ? b ^ 1 : b))] },
      ]);
      const refused = await knob('verify', tampered);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`member '${name}' does not match its SHA-256 in the manifest`);
    });
  }
});
