/**
 * Packaging, offline: `electron-builder --linux dir` with a stub Electron distribution (no Electron
 * binary can be had here; the stub carries the fuse wire Electron binaries carry, so the fuses are
 * flipped for real), on the build the test run's global setup made. Checked: the asar holds the
 * built app and nothing of the repository's sources, tests, resources or browser-mode loader;
 * onnxruntime-node is unpacked (native code cannot load from an asar) for linux-x64 only; the
 * default model and data are extra resources where the app's one resolver finds them from the
 * packaged code's folder; the fuses are set as electron-builder.yml says.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listPackage } from '@electron/asar';
import { FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { beforeAll, describe, expect, it } from 'vitest';
import { resourcesRootFrom } from '../../src-main/core/files/resource-path';

const work = mkdtempSync(join(tmpdir(), 'knob-package-'));
const unpacked = join(work, 'dist', 'linux-unpacked');
const resources = join(unpacked, 'resources');
let asarFiles: string[] = [];

/** A stand-in for the Electron binary: Electron's fuse sentinel and wire (v1, 8 fuses, Electron's defaults). */
function stubElectronDist(): string {
  const dist = join(work, 'electron-dist');
  mkdirSync(dist, { recursive: true });
  const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
  writeFileSync(
    join(dist, 'electron'),
    Buffer.concat([
      Buffer.from('stub electron\n'),
      Buffer.from(SENTINEL),
      Buffer.from([1, 8]),
      Buffer.from('10110001'),
    ]),
  );
  chmodSync(join(dist, 'electron'), 0o755);
  writeFileSync(join(dist, 'version'), '45.5.0');
  writeFileSync(join(dist, 'LICENSE'), 'stub');
  return dist;
}

/** Seconds one electron-builder run may take: it packs in about 20 s here. */
const PACKAGING_SECONDS = 120;

/** `electron-builder --linux dir` into `work`, killed if it outlives PACKAGING_SECONDS. */
function electronBuilder(): ReturnType<typeof spawnSync> {
  return spawnSync(
    'npx',
    [
      'electron-builder',
      '--linux',
      'dir',
      '--x64',
      '--publish',
      'never',
      `-c.electronDist=${stubElectronDist()}`,
      `-c.directories.output=${join(work, 'dist')}`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: PACKAGING_SECONDS * 1000, killSignal: 'SIGKILL' },
  );
}

beforeAll(
  () => {
    let result = electronBuilder();
    // electron-builder 26 once sat idle forever in a CI run (every thread waiting, no child, no
    // socket; alone it packs in 20 s): a run that stalls is said so and tried once more.
    if (result.error !== undefined && (result.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
      process.stderr.write(`packaging: electron-builder stalled for ${PACKAGING_SECONDS} s; trying once more\n`);
      rmSync(join(work, 'dist'), { recursive: true, force: true });
      result = electronBuilder();
    }
    if (result.status !== 0)
      throw new Error(
        `electron-builder failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout}\n${result.stderr}`,
      );
    asarFiles = listPackage(join(resources, 'app.asar'), { isPack: false }).map((f) => f.replaceAll('\\', '/'));
  },
  2 * PACKAGING_SECONDS * 1000 + 10_000,
);

describe('electron-builder --linux dir', () => {
  it('the asar holds the built app, and not the sources, tests, resources or tsx', () => {
    for (const file of [
      '/package.json',
      '/out/main/index.js',
      '/out/main/inference-process.js',
      '/out/preload/index.cjs',
      '/out/renderer/index.html',
    ])
      expect(asarFiles, file).toContain(file);
    for (const prefix of [
      '/src-main',
      '/src-shared',
      '/src-renderer',
      '/tests',
      '/resources',
      '/node_modules/tsx/',
      '/node_modules/esbuild/',
      '/node_modules/@esbuild/',
      '/node_modules/vitest/',
      '/node_modules/electron/',
    ])
      expect(
        asarFiles.filter((f) => f.startsWith(prefix)),
        prefix,
      ).toEqual([]);
  });

  it('onnxruntime-node is unpacked, with the linux-x64 native binaries only', () => {
    const bin = join(resources, 'app.asar.unpacked', 'node_modules', 'onnxruntime-node', 'bin', 'napi-v6');
    expect(readdirSync(bin)).toEqual(['linux']);
    expect(readdirSync(join(bin, 'linux'))).toEqual(['x64']);
    expect(readdirSync(join(bin, 'linux', 'x64')).sort()).toEqual(['libonnxruntime.so.1', 'onnxruntime_binding.node']);
    expect(asarFiles.filter((f) => /onnxruntime-node\/bin\/napi-v6\/(darwin|win32|linux\/arm64)/.test(f))).toEqual([]);
  });

  it("the default model and data are extra resources, found by the app's resolver from the packaged code", () => {
    const packagedMain = join(resources, 'app.asar', 'out', 'main');
    const root = resourcesRootFrom(packagedMain);
    expect(root).toBe(join(resources, 'resources'));
    for (const file of [
      'models/knob-fmnist.onnx',
      'models/knob-fmnist.card.json',
      'data/t10k-images-idx3-ubyte.gz',
      'data/t10k-labels-idx1-ubyte.gz',
    ])
      expect(existsSync(join(root, file)), file).toBe(true);
  });

  it('the fuses: no RunAsNode, NODE_OPTIONS or inspect; the app only from its asar, integrity-checked; cookies encrypted', async () => {
    const wire = await getCurrentFuseWire(join(unpacked, 'knob-studio'));
    const on = (fuse: FuseV1Options) => String.fromCharCode(wire[fuse] as number) === '1';
    expect(on(FuseV1Options.RunAsNode)).toBe(false);
    expect(on(FuseV1Options.EnableNodeOptionsEnvironmentVariable)).toBe(false);
    expect(on(FuseV1Options.EnableNodeCliInspectArguments)).toBe(false);
    expect(on(FuseV1Options.OnlyLoadAppFromAsar)).toBe(true);
    // off in the stub's wire (Electron's default), so only the packaging turns it on
    expect(on(FuseV1Options.EnableEmbeddedAsarIntegrityValidation)).toBe(true);
    expect(on(FuseV1Options.EnableCookieEncryption)).toBe(true);
    expect(on(FuseV1Options.GrantFileProtocolExtraPrivileges)).toBe(false);
  });
});
