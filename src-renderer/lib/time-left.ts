/**
 * How long a task has left at the rate it has gone so far: (elapsed / done) x (total - done)
 * seconds. Null until a step is done, when the total is unknown, or when the figures are not a
 * task's (done beyond total): a guess from nothing is not shown.
 */
export function secondsLeft(done: number, total: number | null, elapsedSeconds: number): number | null {
  if (total === null || !(done > 0) || done > total || !(elapsedSeconds > 0)) return null;
  return (elapsedSeconds / done) * (total - done);
}

/** "about 40 s left", "about 3 min left"; empty when there is no estimate. */
export function timeLeftText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '';
  if (seconds < 1) return 'almost done';
  return seconds < 90 ? `about ${Math.round(seconds)} s left` : `about ${Math.round(seconds / 60)} min left`;
}
