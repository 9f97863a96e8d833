import { finiteOrNull } from '../../../src-shared/api/finite-or-null';
import type { TuneCandidate, TuningSummary } from '../../../src-shared/api/measurements';
import type { TuningCandidate, TuningResult } from '../../../src-shared/tuning';
import { methodWithNote } from '../../../src-shared/metrics/metric-format';

/** A tune as the API (tune.run) and `knob tune --json` carry it: numbers that are not finite as null. */

function candidateView(c: TuningCandidate): TuneCandidate {
  return {
    point: { settings: c.point.settings, temperature: c.point.temperature },
    metric: finiteOrNull(c.metric),
    settlingTimeSeconds: finiteOrNull(c.settlingTimeSeconds),
    overshootPercent: finiteOrNull(c.overshootPercent),
    bandwidthHz: finiteOrNull(c.bandwidthHz),
    feasible: c.feasible,
    violations: c.violations,
  };
}

export function tuningSummary(result: TuningResult & { threads: number; wallMs: number }): TuningSummary {
  const d = result.improvement;
  return {
    metric: result.metric,
    identity: result.identity,
    split: result.split,
    searchFrameCount: result.searchFrameCount,
    screenedFrameCount: result.screenedFrameCount,
    heldOutFrameCount: result.heldOutFrameCount,
    searchedOnHeldOut: result.searchedOnHeldOut,
    heldOut: { current: finiteOrNull(result.heldOut.current), best: finiteOrNull(result.heldOut.best) },
    constraints: result.constraints,
    foundFeasible: result.foundFeasible,
    current: candidateView(result.current),
    best: candidateView(result.best),
    grid: result.grid.map(candidateView),
    pareto: result.pareto.map(candidateView),
    improvement: {
      difference: finiteOrNull(d.difference),
      lo: finiteOrNull(d.interval.lo),
      hi: finiteOrNull(d.interval.hi),
      method: methodWithNote(d.interval.identity, d.note),
      verdict: d.verdict,
    },
    evaluations: result.evaluations,
    threads: result.threads,
    wallMs: result.wallMs,
  };
}
