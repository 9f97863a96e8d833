/**
 * Video names and contents are data, never options or instructions to ffmpeg (issue 26), with the
 * real ffprobe and ffmpeg: a real video named `-report.mp4` opens and decodes as a file (it reached
 * ffprobe as its -report option), through the source and through `knob run --source=-report.mp4`;
 * an ffconcat script saved as .mp4 that lists a FIFO (which hung `knob run`, getting round the
 * special-file rule) is refused with the format named, and a script listing another real video is
 * refused the same way (nothing it lists is read). The bounds here are hang guards, not latencies.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openVideoSource } from '../../src-main/core/sources/video-source';

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'knob-video-names-'));
const target = { width: 28, height: 28, channels: 1 as const };
/** A FIFO open would block for ever: this bounds the wait (a hang guard). */
const HANG_GUARD_MS = 30_000;

beforeAll(() => {
  execFileSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=32x32:rate=10', '-t', '1'].concat([
      '-pix_fmt',
      'yuv420p',
      '--',
      join(dir, '-report.mp4'),
    ]),
  );
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  // the CLI's inference process loads tsx from its working folder's node_modules
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'fifo-list.mp4'), `ffconcat version 1.0\nfile '${join(dir, 'pipe')}'\n`);
  writeFileSync(join(dir, 'video-list.mp4'), `ffconcat version 1.0\nfile '${join(dir, '-report.mp4')}'\n`);
});

async function frameCount(path: string): Promise<number> {
  const source = await openVideoSource(path, { target });
  let frames = 0;
  for await (const batch of source.batches(4)) frames += batch.count;
  return frames;
}

/** Rejects when `promise` has not settled within the hang guard. */
function guarded<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('still waiting: it hung')), HANG_GUARD_MS)),
  ]);
}

describe('video file names and contents', () => {
  it("a real video named '-report.mp4' opens as data and leaves no ffmpeg report", async () => {
    expect(await frameCount(join(dir, '-report.mp4'))).toBe(10);
    expect(readdirSync(dir).filter((f) => /^ffprobe-|^ffmpeg-/.test(f))).toEqual([]);
  });

  it("knob run --source=-report.mp4 decodes it (a relative name, run from the video's folder)", () => {
    const out = join(dir, 'run-out');
    mkdirSync(out);
    const result = spawnSync(
      process.execPath,
      [join(root, 'bin', 'knob.mjs'), 'run', '--source=-report.mp4', '--limit', '4', '--out', out],
      { cwd: dir, encoding: 'utf8', timeout: 120_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(existsSync(join(out, 'trace.arrow'))).toBe(true);
    expect(readdirSync(dir).filter((f) => /^ffprobe-|^ffmpeg-/.test(f))).toEqual([]);
  }, 150_000);

  it('an ffconcat script saved as .mp4, listing a FIFO, is refused with its format named', async () => {
    await expect(guarded(openVideoSource(join(dir, 'fifo-list.mp4'), { target }))).rejects.toThrow(
      /fifo-list\.mp4: not opened: its format 'concat' is not a video container this app reads/,
    );
  });

  it('an ffconcat script listing a real video is refused the same way: nothing it lists is read', async () => {
    await expect(guarded(openVideoSource(join(dir, 'video-list.mp4'), { target }))).rejects.toThrow(
      /video-list\.mp4: not opened: its format 'concat' is not a video container/,
    );
  });
});
