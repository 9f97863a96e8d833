import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { fashionMnistSample } from './fashion-mnist';

/**
 * A real video of the shipped test set's first `count` images (lossless FFV1, grey, 28 x 28) at
 * `fps`, made by ffmpeg: an unlabelled stream whose true classes the test knows.
 */
export function fashionVideo(dir: string, count: number, fps: number): { path: string; labels: number[] } {
  const sample = fashionMnistSample(count);
  const frames = join(dir, 'video-frames');
  mkdirSync(frames, { recursive: true });
  sample.images.forEach((image, i) => {
    const file = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
    file.data = Buffer.from(image);
    writeFileSync(
      join(frames, `${String(i).padStart(4, '0')}.png`),
      PNG.sync.write(file, { colorType: 0, inputColorType: 0, inputHasAlpha: false }),
    );
  });
  const path = join(dir, 'fashion.mkv');
  const input = join(frames, '%04d.png');
  execFileSync(
    'ffmpeg',
    ['-hide_banner', '-loglevel', 'error', '-y', '-framerate', String(fps), '-i', input].concat([
      '-c:v',
      'ffv1',
      '-pix_fmt',
      'gray',
      path,
    ]),
  );
  return { path, labels: sample.labels };
}

/**
 * A colour test-pattern video (ffmpeg's testsrc, H.264 in MP4) of `seconds` at `fps` and `size`
 * (WxH): a stream of a camera's shape, with no labels. Throws with ffmpeg's message when it cannot
 * be made.
 */
export function testPatternVideo(path: string, seconds: number, size = '320x240', fps = 30): string {
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `testsrc=size=${size}:rate=${fps}`,
    '-t',
    String(seconds),
    '-pix_fmt',
    'yuv420p',
    path,
  ]);
  return path;
}
