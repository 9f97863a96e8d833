/**
 * The staleness rule, once for every view the desk computes from the backend (calibration, A/B,
 * probes, analyses, tunes, replays): a view says what it was computed for (its basis: the
 * recording, the knob settings' version, the labels' revision, ...) and is stale as soon as any of
 * those has moved on; the reason is worded for the operator. A result that arrives for another
 * recording than the current one is never shown at all (`ofRecording`).
 */
export interface ViewBasis {
  recordingId?: number | null;
  /** How the calibration breaks its headline values down. */
  groupBy?: string;
  /** The binning of the calibration figures, in words (binningChoiceText). */
  binning?: string;
  settingsVersion?: number;
  /** Counts changes of the A/B slots. */
  slotsRevision?: number;
  /** Frames the view covers; compared only for a view of the whole recording. */
  frameCount?: number;
  /** Counts label steps (corrections, undo, import, the metrics' choice of labels). */
  labelsRevision?: number;
}

type Part = keyof ViewBasis;

/** In the order a reason is looked for: the first that differs is the one given. */
const REASONS: { [K in Part]-?: (computed: ViewBasis[K], now: ViewBasis[K]) => string } = {
  recordingId: () => 'computed on another recording',
  groupBy: (computed, now) => `grouped by ${computed}, ${now} is asked for`,
  binning: (computed, now) => `binned with ${computed}, ${now} is asked for`,
  settingsVersion: (computed, now) => `computed at settings v${computed}, the knobs are at v${now}`,
  slotsRevision: () => 'A or B changed since',
  frameCount: (computed, now) => `computed on ${computed} frames, ${now} are recorded`,
  labelsRevision: () => 'labels changed since',
};

/**
 * Why a view computed for `computed` no longer describes what the desk is at (`now`), or null when
 * it still does. Only the parts `now` gives (not undefined) are compared: a view that does not
 * depend on a part (a probe on the recording, A/B on the knobs) leaves it out.
 */
export function whyStale(computed: ViewBasis, now: ViewBasis): string | null {
  for (const part of Object.keys(REASONS) as Part[]) {
    if (now[part] === undefined || computed[part] === now[part]) continue;
    const reason = REASONS[part] as (computed: unknown, now: unknown) => string;
    return reason(computed[part], now[part]);
  }
  return null;
}

/** A result is of the current recording (else it arrived too late to be shown). */
export function ofRecording(result: { recordingId: number } | null, recordingId: number | null): boolean {
  return result !== null && whyStale({ recordingId: result.recordingId }, { recordingId }) === null;
}
