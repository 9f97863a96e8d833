/**
 * A kept-class trace whose frames allow no finite bound on a metric (logits thousands apart, so a
 * rest's terms overflow) says "no stated bound" for it, with why, rather than "within Infinity":
 * every stated bound is a finite number the desk and metrics.json can carry.
 */
import { describe, expect, it } from 'vitest';
import { withKeptClassBounds } from '../../src-shared/metrics/kept-class-bounds';
import { metricSuite } from '../../src-shared/metrics/metric-suite';
import { seededRandom } from '../../src-shared/random';
import { keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import { topLabelTraceScores } from '../../src-shared/trace/top-label-trace-scores';
import { syntheticTrace } from '../support/synthetic-trace';

describe('kept-class bounds that are not finite', () => {
  it('are stated as no bound, with the reason', () => {
    const frames = 200;
    const k = 12;
    const base = syntheticTrace({ frames, classCount: k, seed: 5 });
    const random = seededRandom(9);
    const zStatic = Float32Array.from({ length: frames * k }, () => 1e4 * (random() - 0.5));
    const zDyn = Float32Array.from({ length: frames * k }, () => 3e4 * (random() - 0.5));
    const full = { ...base, zStatic, zDyn };
    const kept = {
      ...full,
      zStatic: new Float32Array(0),
      zDyn: new Float32Array(0),
      keptClasses: keepLeadingClasses(full, 3),
    };
    const g = new Float64Array(frames).fill(0.5);
    const all = Int32Array.from({ length: frames }, (_, i) => i);
    const scored = topLabelTraceScores(kept, g, all);
    const metrics = withKeptClassBounds(
      metricSuite(scored.scores, { everyClass: false }, scored.top),
      scored.kept!.bounds,
      scored.kept!,
    );
    const unbounded = metrics.filter((m) => /allow no finite bound/.test(m.approximation ?? ''));
    expect(unbounded.length).toBeGreaterThan(0);
    for (const m of unbounded) {
      expect(m.bound).toBeUndefined();
      expect(m.approximation).toMatch(/^3 of 12 classes kept a frame: no stated bound for this metric/);
    }
    for (const m of metrics) if (m.bound !== undefined) expect(Number.isFinite(m.bound), m.identity).toBe(true);
  });
});
