import { readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import type { Trace } from '../../../src-shared/trace/trace';
import { sha256Hex } from '../files/sha256';
import { readTraceFile, writeTraceFile } from './trace-arrow';

/**
 * Recordings of a model's features over a dataset, kept so that fitting Knob heads again (another
 * seed, a fit that was cancelled or failed) does not run the model over the images again (issue
 * 31): a trace file named by the SHA-256 of the key its caller gives (make-knob-model.ts: the
 * model's hash, contract and adapter, the dataset's identity hash, the preprocessing, the labels,
 * the corruption schedule and its seed; the caller also checks the labels it reads back). Only the
 * newest CACHED_RECORDINGS are kept: at 2,048 features an image, 60,000 images take about 0.5 GB.
 */
export const CACHED_RECORDINGS = 3;

export interface FeatureCache {
  /** The recording made by `key`'s inputs, or null when none is kept (or it no longer reads). */
  read(key: unknown): Promise<Trace | null>;
  /** Keeps the recording (atomically), then removes the oldest beyond CACHED_RECORDINGS. */
  keep(key: unknown, trace: Trace): Promise<void>;
}

const fileOf = (folder: string, key: unknown) =>
  join(folder, `features-${sha256Hex(new TextEncoder().encode(JSON.stringify(key)))}.arrow`);

export function featureCache(folder: string): FeatureCache {
  return {
    async read(key) {
      const file = fileOf(folder, key);
      try {
        const { trace } = await readTraceFile(file);
        if (trace.features === undefined) return null;
        // the newest kept are the last used
        const now = new Date();
        await utimes(file, now, now);
        return trace;
      } catch {
        // absent, or damaged: the recording is made again (and replaces it)
        return null;
      }
    },
    async keep(key, trace) {
      const kept = fileOf(folder, key);
      await writeTraceFile(kept, trace, null);
      // the one just written stays whatever the clock's resolution; the others by last use
      const names = (await readdir(folder)).filter(
        (name) => /^features-[0-9a-f]{64}\.arrow$/.test(name) && join(folder, name) !== kept,
      );
      const aged = await Promise.all(
        names.map(async (name) => ({
          name,
          // a file another make removed meanwhile is the oldest
          mtimeMs: await stat(join(folder, name)).then(
            (s) => s.mtimeMs,
            () => -Infinity,
          ),
        })),
      );
      aged.sort((a, b) => b.mtimeMs - a.mtimeMs);
      for (const { name } of aged.slice(CACHED_RECORDINGS - 1)) await rm(join(folder, name), { force: true });
    },
  };
}
