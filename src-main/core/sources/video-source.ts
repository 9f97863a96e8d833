import { spawn } from 'node:child_process';
import { KnobError } from '../../../src-shared/errors';
import type { FrameGeometry } from '../../../src-shared/frames/fit-frame';
import { checkUserFile } from '../files/user-files';
import { ffmpegInputArgs, refusedDemuxer, refusedDemuxerReason } from './ffmpeg-input';
import type { FrameSource } from './frame-source';
import { fileIdentity } from './source-identity';

/**
 * Video files decoded by the ffmpeg found on PATH (Debian: apt-get install ffmpeg). ffmpeg scales
 * each frame to the model's input size with its area filter and converts it to grey or RGB, so only
 * model-sized frames cross the pipe; its showinfo filter reports each frame's presentation time,
 * which becomes the frame's timestamp (variable frame rates stay variable). A PTS that does not
 * increase (broken muxing) is moved one nominal frame period after its predecessor. Both programs
 * get the file as data only: an absolute file: path, the file protocol and container demuxers
 * alone (ffmpeg-input.ts).
 */
interface Probe {
  width: number;
  height: number;
  frameRateHz: number;
  frameCount: number | null;
}

function missingProgram(program: string): KnobError {
  return new KnobError(
    'MISSING_PROGRAM',
    `${program} was not found on PATH; install FFmpeg (Debian: apt-get install ffmpeg) to read video files`,
  );
}

/** How long ffprobe may take to describe a file before it is stopped (a hostile file, a stuck read). */
export const PROBE_TIMEOUT_MS = 20_000;
const PROBE_OUTPUT_BYTES = 1024 * 1024;

function runToEnd(
  program: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    // Output is kept to a bound: a description is small, whatever the file says.
    child.stdout.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(0, PROBE_OUTPUT_BYTES)));
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-PROBE_OUTPUT_BYTES)));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error.code === 'ENOENT' ? missingProgram(program) : error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

function rate(text: string | undefined): number {
  const [num, den] = (text ?? '').split('/').map(Number);
  return num > 0 && den > 0 ? num / den : 0;
}

async function probe(path: string, programs: { ffprobe: string }): Promise<Probe> {
  const result = await runToEnd(
    programs.ffprobe,
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=width,height,avg_frame_rate,r_frame_rate,nb_frames',
      '-of',
      'json',
      ...ffmpegInputArgs(path, null),
    ],
    PROBE_TIMEOUT_MS,
  );
  if (result.timedOut)
    throw new KnobError('INVALID_INPUT', `${path}: ffprobe did not describe it within ${PROBE_TIMEOUT_MS / 1000} s`);
  const stream = (() => {
    try {
      return (JSON.parse(result.stdout) as { streams?: Array<Record<string, string | number>> }).streams?.[0];
    } catch {
      return undefined;
    }
  })();
  const demuxer = refusedDemuxer(result.stderr);
  if (demuxer !== null) throw new KnobError('INVALID_INPUT', `${path}: not opened: ${refusedDemuxerReason(demuxer)}`);
  if (result.code !== 0 || stream === undefined) {
    const reason = result.stderr.trim().split('\n').pop() || 'no video stream';
    throw new KnobError('INVALID_INPUT', `${path}: not a readable video (${reason})`);
  }
  const frameCount = Number(stream.nb_frames);
  return {
    width: Number(stream.width),
    height: Number(stream.height),
    frameRateHz: rate(String(stream.avg_frame_rate)) || rate(String(stream.r_frame_rate)) || 30,
    frameCount: Number.isInteger(frameCount) && frameCount > 0 ? frameCount : null,
  };
}

export interface VideoSourceOptions {
  /** Size and channels the frames are decoded to (the model's input). */
  target: FrameGeometry & { channels: 1 | 3 };
  frameRateHz?: number;
  ffmpeg?: string;
  ffprobe?: string;
  /** Progress of hashing the file (its identity), in bytes; CANCELLED when aborted. */
  onProgress?: (doneBytes: number, totalBytes: number) => void;
  signal?: AbortSignal;
}

/** What a batch's frame buffer starts at; a larger batch grows it by doubling (batches()). */
const FIRST_CAPACITY_BYTES = 64 * 1024 * 1024;

const SHOWINFO = /n:\s*(\d+)\s+pts:\s*-?\d+\s+pts_time:\s*(-?[0-9.eE+-]+)/;

export async function openVideoSource(path: string, options: VideoSourceOptions): Promise<FrameSource> {
  // ffmpeg opens the file itself: a FIFO, a device or a /proc entry is refused here first.
  await checkUserFile(path, 'video');
  const ffmpeg = options.ffmpeg ?? 'ffmpeg';
  const info = await probe(path, { ffprobe: options.ffprobe ?? 'ffprobe' });
  const identity = await fileIdentity(path, 'video', options);
  const { width, height, channels } = options.target;
  const frameRateHz = options.frameRateHz ?? info.frameRateHz;
  const frameBytes = width * height * channels;
  return {
    info: {
      kind: 'video',
      path,
      description: `video ${info.width} x ${info.height} at ${info.frameRateHz.toFixed(3)} fps${info.frameCount ? `, ${info.frameCount} frames` : ''}, decoded to ${width} x ${height}`,
      frameCount: info.frameCount,
      width,
      height,
      channels,
      labelNames: null,
      hasLabels: false,
      frameRateHz,
      timestampSource: 'pts',
      identity,
      classMapping: null,
    },
    async *batches(maxCount, fromFrame = 0) {
      const args = [
        '-hide_banner',
        '-nostdin',
        '-nostats',
        ...ffmpegInputArgs(path, '-i'),
        '-an',
        '-vf',
        `scale=${width}:${height}:flags=area,format=${channels === 1 ? 'gray' : 'rgb24'},showinfo`,
        '-fps_mode',
        'passthrough',
        '-f',
        'rawvideo',
        '-pix_fmt',
        channels === 1 ? 'gray' : 'rgb24',
        'pipe:1',
      ];
      const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const times: number[] = [];
      let stderrLine = '';
      let stderrTail = '';
      child.stderr.on('data', (data: Buffer) => {
        const text = stderrLine + data.toString();
        const lines = text.split('\n');
        stderrLine = lines.pop() ?? '';
        for (const line of lines) {
          const match = SHOWINFO.exec(line);
          if (match) times[Number(match[1])] = Number(match[2]);
          else if (line.trim()) stderrTail = line.trim();
        }
      });
      const exit = new Promise<{ code: number | null; error: Error | null }>((resolve) => {
        child.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ code: null, error: error.code === 'ENOENT' ? missingProgram(ffmpeg) : error }),
        );
        child.on('close', (code) => resolve({ code, error: null }));
      });
      // Each batch's frames are read straight into a buffer of their own, filled chunk by chunk as
      // the pipe delivers them (64 KiB at a time): joining every chunk to what was pending copied a
      // batch about fifty times over (22 frames of 320 x 240: 5 MB) and was most of the main
      // process's time in `knob run` on a video, with the collector behind it. A batch larger than
      // FIRST_CAPACITY_BYTES grows by doubling, so a large maxCount on a short video allocates
      // what the video holds, as before.
      const batchBytes = maxCount * frameBytes;
      const newBuffer = () => new Uint8Array(Math.min(batchBytes, FIRST_CAPACITY_BYTES));
      let filling = newBuffer();
      let filled = 0;
      let first = 0;
      let previous = -Infinity;
      const emit = (frames: Uint8Array, count: number) => {
        const timestampsSeconds = new Float64Array(count);
        for (let i = 0; i < count; i++) {
          const pts = times[first + i];
          const t =
            pts !== undefined && Number.isFinite(pts) && pts > previous
              ? pts
              : previous === -Infinity
                ? 0
                : previous + 1 / frameRateHz;
          timestampsSeconds[i] = t;
          previous = t;
        }
        const batch = { first, count, frames, labels: null, timestampsSeconds };
        first += count;
        return batch;
      };
      // Resuming decodes from the start and drops the frames before `fromFrame` (ffmpeg's -ss seeks
      // to keyframes, which would shift frame numbering).
      const keep = function* (batch: ReturnType<typeof emit>) {
        const skip = Math.max(0, fromFrame - batch.first);
        if (skip >= batch.count) return;
        if (skip === 0) {
          yield batch;
          return;
        }
        yield {
          ...batch,
          first: batch.first + skip,
          count: batch.count - skip,
          frames: batch.frames.subarray(skip * frameBytes),
          timestampsSeconds: batch.timestampsSeconds.subarray(skip),
        };
      };
      try {
        for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
          for (let offset = 0; offset < chunk.length;) {
            const take = Math.min(chunk.length - offset, batchBytes - filled);
            if (filled + take > filling.length) {
              const grown = new Uint8Array(Math.min(batchBytes, Math.max(filled + take, 2 * filling.length)));
              grown.set(filling.subarray(0, filled));
              filling = grown;
            }
            filling.set(chunk.subarray(offset, offset + take), filled);
            filled += take;
            offset += take;
            if (filled < batchBytes) continue;
            // showinfo writes a frame's line before ffmpeg writes the frame, but the two pipes race; wait for the times.
            while (times.length < first + maxCount && child.exitCode === null)
              await new Promise((r) => setTimeout(r, 1));
            const full = filling;
            filling = newBuffer();
            filled = 0;
            yield* keep(emit(full, maxCount));
          }
        }
        const { code, error } = await exit;
        if (error) throw error;
        const remaining = Math.floor(filled / frameBytes);
        if (remaining > 0) yield* keep(emit(filling.slice(0, remaining * frameBytes), remaining));
        if (code !== 0)
          throw new KnobError(
            'INVALID_INPUT',
            `${path}: ffmpeg stopped after ${first} frames (exit ${code}: ${stderrTail || 'no message'})`,
          );
        if (first === 0)
          throw new KnobError(
            'INVALID_INPUT',
            `${path}: the video has no decodable frames${stderrTail ? ` (${stderrTail})` : ''}`,
          );
      } finally {
        if (child.exitCode === null) child.kill();
      }
    },
  };
}
