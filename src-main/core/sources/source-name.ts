import { basename } from 'node:path';
import type { SourceInfo } from './frame-source';

/**
 * A source as messages and descriptions name it: the file's name with what it is, so an operator
 * knows which recording a figure or an error is about ("field.avi (video 28 x 28 at 25.000 fps, ...)");
 * the description alone for sources with no file (the embedded set, a camera).
 */
export function sourceName(info: SourceInfo): string {
  return info.path === null ? info.description : `${basename(info.path)} (${info.description})`;
}
