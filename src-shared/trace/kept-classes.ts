import { KnobError } from '../errors';
import { expNonPositive } from '../fusion/exp-non-positive';
import { keptClassesText } from '../metrics/kept-class-bounds';
import type { Trace } from './trace';

/**
 * A trace's logits with only the leading classes of each frame kept (issue 29: a trace of 1,000
 * classes is 8 KB a frame as full rows, so 24 hours at 30 fps would be 20 GB; kept at 32 classes a
 * frame it is 360 bytes of logits and about 377 with the rest of a frame, under a gigabyte a day).
 *
 * For frame i the kept set T_i holds `keep` distinct classes in increasing class order: its label
 * when known (so its NLL and Brier terms stay bounded) and otherwise the classes with the largest
 * max(zs_k, zd_k), the ones that lead either branch. Of the rest R_i it keeps, for each branch b,
 *   rest log-sum-exp   L_b = log sum_{k in R} exp(zb_k),
 *   rest maximum       M_b = max_{k in R} zb_k,
 *   rest slope         a_b = sum_{k in R} softmax_R(zb)_k (zd_k - zs_k),
 * which is all that bounds the fused remainder R(g) = sum_{k in R} exp((1 - g) zs_k + g zd_k) at
 * any gate value (kept-class-scores.ts): log R is convex in g, so it lies under its chord
 * (1 - g) L_s + g L_d (Hoelder's inequality) and above its tangents at 0 and 1
 * (L_s + g a_s and L_d - (1 - g) a_d), and every fused rest logit is at most (1 - g) M_s + g M_d.
 */
export interface KeptClassLogits {
  /** Classes kept a frame. */
  keep: number;
  /** n x keep class indices, increasing within a frame. */
  classes: Uint16Array;
  /** n x keep kept logits of each branch, in the order of `classes`. */
  zStatic: Float32Array;
  zDyn: Float32Array;
  restLseStatic: Float64Array;
  restLseDyn: Float64Array;
  restMaxStatic: Float32Array;
  restMaxDyn: Float32Array;
  restSlopeStatic: Float64Array;
  restSlopeDyn: Float64Array;
}

/** The per-frame arrays of KeptClassLogits (for code that copies or compares them all). */
export const KEPT_CLASS_ARRAYS = [
  'classes',
  'zStatic',
  'zDyn',
  'restLseStatic',
  'restLseDyn',
  'restMaxStatic',
  'restMaxDyn',
  'restSlopeStatic',
  'restSlopeDyn',
] as const satisfies ReadonlyArray<keyof KeptClassLogits>;

type KeptClassArray = KeptClassLogits[(typeof KEPT_CLASS_ARRAYS)[number]];

/**
 * The kept-class logits with each per-frame array replaced by `map(array, valuesPerFrame)` (keep
 * for the classes and their logits, 1 for a rest summary): slicing, growing or copying them all.
 */
export function mapKeptClassArrays(
  kept: KeptClassLogits,
  map: <T extends KeptClassArray>(array: T, valuesPerFrame: number) => T,
): KeptClassLogits {
  const out = { ...kept };
  for (const name of KEPT_CLASS_ARRAYS) {
    const perFrame = name === 'classes' || name === 'zStatic' || name === 'zDyn' ? kept.keep : 1;
    (out as Record<string, KeptClassArray | number>)[name] = map(kept[name], perFrame);
  }
  return out;
}

/**
 * Refuses `what` on a kept-class trace: it reads every class of every frame (a calibrator, the
 * tuner, an export, a frame's class probabilities), which the trace does not hold. One set of
 * words for every view and service of the desk that needs them.
 */
export function requireEveryClass(trace: Pick<Trace, 'keptClasses' | 'classCount'>, what: string): void {
  const kept = trace.keptClasses;
  if (kept === undefined) return;
  throw new KnobError(
    'NOT_AVAILABLE',
    `${what} needs every class of every frame, and this recording is a kept-class trace (${keptClassesText({ keep: kept.keep, classCount: trace.classCount })}): load the trace it was compacted from, or record with every class`,
  );
}

/**
 * What a view computed from per-frame confidences and top-1 says on a kept-class trace (they are
 * its kept-class estimates); undefined on a trace of every class.
 */
export function keptClassEstimateNote(trace: Pick<Trace, 'keptClasses' | 'classCount'>): string | undefined {
  const kept = trace.keptClasses;
  return kept === undefined
    ? undefined
    : `a kept-class trace (${kept.keep} of ${trace.classCount} classes a frame): its confidences and top-1 are the kept-class estimates`;
}

/** Class indices are stored as uint16. */
export const KEPT_CLASSES_MAX_CLASS_COUNT = 65_536;

export function allocateKeptClassLogits(frameCount: number, keep: number): KeptClassLogits {
  return {
    keep,
    classes: new Uint16Array(frameCount * keep),
    zStatic: new Float32Array(frameCount * keep),
    zDyn: new Float32Array(frameCount * keep),
    restLseStatic: new Float64Array(frameCount),
    restLseDyn: new Float64Array(frameCount),
    restMaxStatic: new Float32Array(frameCount),
    restMaxDyn: new Float32Array(frameCount),
    restSlopeStatic: new Float64Array(frameCount),
    restSlopeDyn: new Float64Array(frameCount),
  };
}

/**
 * Refuses a `keep` that leaves no rest, one class (the label would be all a frame keeps, so every
 * frame would look right), a class count uint16 cannot index, or two classes (whose presets read the
 * probability of class 1, which kept classes do not give for every frame).
 */
export function checkKeptClassCount(keep: number, classCount: number): void {
  if (classCount < 3)
    throw new KnobError('INVALID_INPUT', `a trace of ${classCount} classes has nothing to leave out: keep every class`);
  if (!Number.isInteger(keep) || keep < 2 || keep >= classCount)
    throw new KnobError(
      'INVALID_INPUT',
      `classes kept a frame must be an integer from 2 to ${classCount - 1} (the trace has ${classCount} classes), got ${keep}`,
    );
  if (classCount > KEPT_CLASSES_MAX_CLASS_COUNT)
    throw new KnobError(
      'INVALID_INPUT',
      `a trace of ${classCount} classes cannot keep classes by uint16 index (at most ${KEPT_CLASSES_MAX_CLASS_COUNT})`,
    );
}

/**
 * Checks kept-class logits of n frames of K classes (validateTrace's part for them): the shapes,
 * every frame's classes increasing within 0..K-1, every value finite, and each rest summary
 * possible for a rest of K - keep classes (M_b <= L_b <= M_b + log(K - keep), each tangent of the
 * convex log R below its other end): a file cannot claim a rest no classes could have.
 */
export function validateKeptClasses(
  kept: KeptClassLogits,
  frameCount: number,
  classCount: number,
  /** Labelled frames must keep their label (knob compact keeps it; its NLL is unbounded otherwise). */
  labels: Int32Array | null,
): void {
  const fail = (message: string): never => {
    throw new KnobError('INVALID_TRACE', message);
  };
  const { keep } = kept;
  try {
    checkKeptClassCount(keep, classCount);
  } catch (error) {
    fail(
      `the kept_class column keeps ${keep} of ${classCount} classes a frame, which no kept-class trace can (${(error as Error).message})`,
    );
  }
  for (const [name, values, per] of [
    ['kept_class', kept.classes, keep],
    ['kept_z_static', kept.zStatic, keep],
    ['kept_z_dyn', kept.zDyn, keep],
    ['rest_lse_static', kept.restLseStatic, 1],
    ['rest_lse_dyn', kept.restLseDyn, 1],
    ['rest_max_static', kept.restMaxStatic, 1],
    ['rest_max_dyn', kept.restMaxDyn, 1],
    ['rest_slope_static', kept.restSlopeStatic, 1],
    ['rest_slope_dyn', kept.restSlopeDyn, 1],
  ] as const)
    if (values.length < frameCount * per) fail(`${name} has ${values.length} values for ${frameCount} x ${per}`);
  const logRest = Math.log(classCount - keep);
  const { classes, zStatic, zDyn } = kept;
  for (let i = 0; i < frameCount; i++) {
    const base = i * keep;
    const label = labels === null ? -1 : labels[i]!;
    let sum = 0;
    let labelKept = label < 0;
    for (let t = 0; t < keep; t++) {
      const c = classes[base + t]!;
      if (c >= classCount || (t > 0 && c <= classes[base + t - 1]!))
        fail(`the kept classes of frame ${i} are not distinct increasing classes of 0..${classCount - 1}`);
      if (c === label) labelKept = true;
      // finite float32 values sum to a finite float64 (trace.ts allFinite)
      sum += zStatic[base + t]! + zDyn[base + t]!;
    }
    if (!Number.isFinite(sum)) fail(`a kept logit of frame ${i} is not finite`);
    if (!labelKept) fail(`the label of frame ${i} (class ${label}) is not among its kept classes`);
    if (
      !possibleRest(kept.restMaxStatic[i]!, kept.restLseStatic[i]!, logRest) ||
      !possibleRest(kept.restMaxDyn[i]!, kept.restLseDyn[i]!, logRest)
    )
      fail(`the rest summary of frame ${i} is not finite or not one its ${classCount - keep} classes can have`);
    // log R is convex: each tangent stays at or below the other end
    const ls = kept.restLseStatic[i]!;
    const ld = kept.restLseDyn[i]!;
    const slack = 1e-9 * (1 + Math.abs(ls) + Math.abs(ld));
    if (
      !Number.isFinite(kept.restSlopeStatic[i]!) ||
      !Number.isFinite(kept.restSlopeDyn[i]!) ||
      ls + kept.restSlopeStatic[i]! > ld + slack ||
      ld - kept.restSlopeDyn[i]! > ls + slack
    )
      fail(`the rest slopes of frame ${i} are not finite or not ones its rest can have`);
  }
}

/** Whether a rest's maximum M and log-sum-exp L are finite and possible: M <= L <= M + log(count). */
function possibleRest(max: number, lse: number, logCount: number): boolean {
  // relative to M (a float32), so that no L far above it passes on its own size
  const slack = 1e-9 * (1 + Math.abs(max));
  return Number.isFinite(max) && Number.isFinite(lse) && max <= lse + slack && lse <= max + logCount + slack;
}

/**
 * The kept-class logits of every frame of a full trace (validated by the caller). O(n K) once, with
 * per-frame buffers allocated once.
 */
export function keepLeadingClasses(trace: Trace, keep: number): KeptClassLogits {
  const { frameCount: n, classCount: k } = trace;
  checkKeptClassCount(keep, k);
  const out = allocateKeptClassLogits(n, keep);
  keepLeadingClassesInto({ zStatic: trace.zStatic, zDyn: trace.zDyn, labels: trace.labels }, n, k, out, 0);
  return out;
}

/** Rows [0, count) of both branches' logits (K a row) and their labels (-1 or null: none). */
export interface LogitRows {
  zStatic: Float32Array;
  zDyn: Float32Array;
  labels: Int32Array | null;
}

/**
 * The kept classes of `count` logit rows written as frames firstFrame.. of `out` (which has room
 * for them): what keepLeadingClasses does for a whole trace, a batch at a time (knob run --keep),
 * with the same arithmetic, so the same bits. Buffers are allocated once a call, none a frame.
 */
export function keepLeadingClassesInto(
  rows: LogitRows,
  count: number,
  classCount: number,
  out: KeptClassLogits,
  firstFrame: number,
): void {
  const { keep } = out;
  const { zStatic, zDyn, labels } = rows;
  const chosen = new Int32Array(keep);
  const lead = new Float64Array(keep);
  const isKept = new Uint8Array(classCount);
  for (let r = 0; r < count; r++) {
    const offset = r * classCount;
    const i = firstFrame + r;
    const label = labels === null ? -1 : labels[r]!;
    leadingClassesInto(zStatic, zDyn, offset, classCount, keep, label, chosen, lead);
    chosen.sort();
    for (let j = 0; j < keep; j++) {
      const c = chosen[j]!;
      isKept[c] = 1;
      out.classes[i * keep + j] = c;
      out.zStatic[i * keep + j] = zStatic[offset + c]!;
      out.zDyn[i * keep + j] = zDyn[offset + c]!;
    }
    restSummaryInto(zStatic, zDyn, offset, classCount, isKept, i, out);
    for (let j = 0; j < keep; j++) isKept[chosen[j]!] = 0;
  }
}

/**
 * The `keep` classes of largest max(zs, zd) (ties to the lower index), with `label` in place of the
 * last of them when it is a class not among them.
 */
function leadingClassesInto(
  zStatic: Float32Array,
  zDyn: Float32Array,
  offset: number,
  classCount: number,
  keep: number,
  label: number,
  chosen: Int32Array,
  lead: Float64Array,
): void {
  let filled = 0;
  for (let c = 0; c < classCount; c++) {
    const s = zStatic[offset + c]!;
    const d = zDyn[offset + c]!;
    const v = s > d ? s : d;
    if (filled === keep && v <= lead[keep - 1]!) continue;
    let j = filled < keep ? filled++ : keep - 1;
    while (j > 0 && lead[j - 1]! < v) {
      lead[j] = lead[j - 1]!;
      chosen[j] = chosen[j - 1]!;
      j--;
    }
    lead[j] = v;
    chosen[j] = c;
  }
  if (label >= 0 && label < classCount && !chosen.includes(label)) chosen[keep - 1] = label;
}

/** L_b, M_b and a_b of the classes not kept (kept-class-logits' doc), written at frame `frame`. */
function restSummaryInto(
  zStatic: Float32Array,
  zDyn: Float32Array,
  offset: number,
  classCount: number,
  isKept: Uint8Array,
  frame: number,
  out: KeptClassLogits,
): void {
  let maxS = -Infinity;
  let maxD = -Infinity;
  for (let c = 0; c < classCount; c++) {
    if (isKept[c] === 1) continue;
    if (zStatic[offset + c]! > maxS) maxS = zStatic[offset + c]!;
    if (zDyn[offset + c]! > maxD) maxD = zDyn[offset + c]!;
  }
  let sumS = 0;
  let sumD = 0;
  let slopeS = 0;
  let slopeD = 0;
  for (let c = 0; c < classCount; c++) {
    if (isKept[c] === 1) continue;
    const s = zStatic[offset + c]!;
    const d = zDyn[offset + c]!;
    const eS = expNonPositive(s - maxS);
    const eD = expNonPositive(d - maxD);
    sumS += eS;
    sumD += eD;
    slopeS += eS * (d - s);
    slopeD += eD * (d - s);
  }
  out.restLseStatic[frame] = maxS + Math.log(sumS);
  out.restLseDyn[frame] = maxD + Math.log(sumD);
  out.restMaxStatic[frame] = maxS;
  out.restMaxDyn[frame] = maxD;
  out.restSlopeStatic[frame] = slopeS / sumS;
  out.restSlopeDyn[frame] = slopeD / sumD;
}
