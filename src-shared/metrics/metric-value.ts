/**
 * Every number the metrics library returns carries its identity: what exactly was computed
 * (target, binning, edge rule, norm, estimator), so no ECE is ever shown without its variant.
 */
export interface MetricValue {
  /** Short name for tables: 'ECE', 'NLL', 'AUROC'... */
  name: string;
  /** Full variant, e.g. 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)'. */
  identity: string;
  value: number;
  /** Set when the value is an approximation (streaming sketches), saying of what and how close. */
  approximation?: string;
  /**
   * Set when the approximation has a stated bound: the value it stands for (a kept-class trace's
   * full trace, kept-class-bounds.ts) lies within this distance of `value`.
   */
  bound?: number;
  /**
   * Set when the metric could not be computed on these frames (value NaN): it needs at least
   * `needed` labelled frames and got `got`. The rest of the suite is computed as usual.
   */
  unavailable?: Unavailable;
}

/** Why a metric has no value: too few labelled frames for its definition (its bins, its test). */
export interface NotEnoughFrames {
  reason: 'not enough frames';
  needed: number;
  got: number;
}

/**
 * Why a metric has no value: it reads every class's probability on every frame, which a knob turn
 * or `knob metrics` at this many classes does not compute (issue 29: they cost O(frames) in
 * memory, a knob turn in time too); asked for, it is.
 */
export interface EveryClassNotComputed {
  reason: 'every class not computed';
  classCount: number;
}

/**
 * Why a metric has no value: it reads every class's probability on every frame, and a kept-class
 * trace (src-shared/trace/kept-classes.ts) holds `keep` of its `classCount` classes a frame.
 */
export interface ClassesNotKept {
  reason: 'classes not kept';
  keep: number;
  classCount: number;
}

export type Unavailable = NotEnoughFrames | EveryClassNotComputed | ClassesNotKept;

export function metric(name: string, identity: string, value: number, approximation?: string): MetricValue {
  return approximation === undefined ? { name, identity, value } : { name, identity, value, approximation };
}

/** A metric that needs at least `needed` labelled frames, of `got`: no value, and why. */
export function notEnoughFrames(name: string, identity: string, needed: number, got: number): MetricValue {
  return { name, identity, value: Number.NaN, unavailable: { reason: 'not enough frames', needed, got } };
}

/** A metric that reads every class of every frame, not computed on this knob turn of `classCount` classes. */
export function everyClassNotComputed(name: string, identity: string, classCount: number): MetricValue {
  return { name, identity, value: Number.NaN, unavailable: { reason: 'every class not computed', classCount } };
}

/** Why there is no value, for text output: "not enough frames: needs 15, got 10". */
export function unavailableText(unavailable: Unavailable): string {
  switch (unavailable.reason) {
    case 'not enough frames':
      return `${unavailable.reason}: needs ${unavailable.needed}, got ${unavailable.got}`;
    case 'every class not computed':
      return `not computed at ${unavailable.classCount} classes (it reads every class's probability on every frame): ask for every class to get it`;
    case 'classes not kept':
      return `it reads every class's probability on every frame, and the trace keeps ${unavailable.keep} of its ${unavailable.classCount} classes a frame`;
  }
}
