import { resolve } from 'node:path';

/**
 * How a user's video file is handed to ffprobe and ffmpeg so that its name and its content are only
 * data (issue 26):
 *  - the path as `file:` and absolute, so a name such as `-report.mp4` is never read as an option
 *    and no name is read as another protocol (`http:`, `concat:`, `pipe:`) or an image pattern;
 *  - only the file protocol (`-protocol_whitelist file`), so nothing the file names is fetched;
 *  - only container demuxers that read the one file (`-format_whitelist`): not concat (an ffconcat
 *    script saved as .mp4 lists other files, a FIFO among them, which got round the special-file
 *    rule and hung `knob run`), hls or dash (playlists), image2 (file patterns) or any device.
 * The mov demuxer's external data references stay off (its default, enable_drefs 0).
 */
export const VIDEO_DEMUXERS = [
  'mov',
  'mp4',
  'matroska',
  'webm',
  'avi',
  'flv',
  'mpegts',
  'mpeg',
  'ogg',
  'asf',
  'ivf',
  'yuv4mpegpipe',
  'm4v',
  'h264',
  'hevc',
  'gif',
] as const;

/** The input options and input of one ffprobe or ffmpeg call on `path`. */
export function ffmpegInputArgs(path: string, inputFlag: '-i' | null): string[] {
  return [
    '-protocol_whitelist',
    'file',
    '-format_whitelist',
    VIDEO_DEMUXERS.join(','),
    ...(inputFlag === null ? [] : [inputFlag]),
    `file:${resolve(path)}`,
  ];
}

/** The demuxer ffmpeg refused because it is not in VIDEO_DEMUXERS, from its stderr, or null. */
export function refusedDemuxer(stderr: string): string | null {
  return /\[([A-Za-z0-9_,]+) @ [^\]]*\] Format not on whitelist/.exec(stderr)?.[1] ?? null;
}

/** Why a file with a refused demuxer is not opened, for the error message. */
export function refusedDemuxerReason(demuxer: string): string {
  return `its format '${demuxer}' is not a video container this app reads (a playlist, a list of other files or a pattern is refused; allowed: ${VIDEO_DEMUXERS.join(', ')})`;
}
