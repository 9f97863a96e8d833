/**
 * The feature cache (src-main/core/recording/feature-cache.ts, issue 31): a recording of features
 * kept under the hash of what made it comes back as it was; another key finds nothing; a damaged
 * file is as good as none; only the newest CACHED_RECORDINGS stay, the last read counting as new.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CACHED_RECORDINGS, featureCache } from '../../src-main/core/recording/feature-cache';
import type { Trace } from '../../src-shared/trace';
import { syntheticTrace } from '../support/synthetic-trace';

function withFeatures(seed: number): Trace {
  const trace = syntheticTrace({ frames: 40, seed });
  return { ...trace, features: { width: 3, values: Float32Array.from({ length: 120 }, (_, i) => i * seed) } };
}

describe('the feature cache', () => {
  it('gives back what it kept under the same key, and nothing under another or from a damaged file', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-feature-cache-'));
    const cache = featureCache(folder);
    const key = { model: 'a'.repeat(64), data: 'b'.repeat(64), streamSeed: 0 };
    expect(await cache.read(key)).toBeNull();
    const trace = withFeatures(2);
    await cache.keep(key, trace);
    const back = await cache.read({ ...key });
    expect(Array.from(back!.features!.values)).toEqual(Array.from(trace.features!.values));
    expect(Array.from(back!.zDyn)).toEqual(Array.from(trace.zDyn));
    expect(await cache.read({ ...key, streamSeed: 1 })).toBeNull();
    const [file] = readdirSync(folder);
    writeFileSync(join(folder, file!), 'not arrow');
    expect(await cache.read(key)).toBeNull();
  });

  it(`keeps the newest ${CACHED_RECORDINGS}, a read making one newest again`, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-feature-cache-'));
    const cache = featureCache(folder);
    const keys = Array.from({ length: CACHED_RECORDINGS + 1 }, (_, i) => ({ data: i }));
    for (const [i, key] of keys.entries()) {
      if (i === CACHED_RECORDINGS) expect(await cache.read(keys[0])).not.toBeNull();
      await cache.keep(key, withFeatures(i + 1));
      // mtimes of files written within a millisecond can tie: space them
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(readdirSync(folder)).toHaveLength(CACHED_RECORDINGS);
    // the first was read before the last was kept: the second is the oldest, and went
    expect(await cache.read(keys[0])).not.toBeNull();
    expect(await cache.read(keys[1])).toBeNull();
  });
});
