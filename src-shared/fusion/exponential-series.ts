import { expNonPositive } from './exp-non-positive';

/**
 * A sum of exponentials S(g) = sum_k w_k exp(g x_k) with w_k > 0 and x_k >= 0, for g in [0, 1], as
 * power series in g: grouped by x into pieces [s, s + r) with S(g) = sum_p exp(g s_p + c_p) H_p(g),
 * H_p(g) = sum_{m <= M_p} A_{p,m} g^m and A_{p,m} = sum_{k in p} (w_k / exp(c_p)) (x_k - s_p)^m / m!,
 * c_p the log of the piece's largest weight (0 for a single piece, which holds the weight 1).
 *
 * Error bound: every term of the Taylor series of exp(g y) with 0 <= g y <= r is positive, so
 * cutting it after M terms loses at most the upper tail of a Poisson(g y) distribution,
 * P(Poisson(r) > M), relative to exp(g y) (the tail grows with the mean). `termsFor(r)` takes the
 * smallest M whose tail is at most TAIL. Terms that cannot matter are dropped against a floor the
 * caller knows S stays above (`floor`): a class whose whole contribution w exp(y) is below
 * NEGLIGIBLE floor / K, and a class's series once all its remaining terms together are. So S is
 * represented to a relative error below TAIL + NEGLIGIBLE = 2e-13 on [0, 1], and log S to 2e-13
 * absolute: metrics averaged from it are within 1e-12 of the full-vector values, far inside the
 * 1e-9 the knob turn promises. Sums of positive terms evaluated by Horner's rule at g in [0, 1]
 * lose no precision to cancellation: a piece is evaluated to about its term count in ulps.
 */

/** The Taylor series' truncation: its relative tail is at most this. */
const TAIL = 1e-13;
/** A class's dropped terms (or the class, when all of them) are below this share of the floor over K. */
const NEGLIGIBLE = 1e-13;
/** 1 / (m + 1), so the series' inner loop multiplies instead of dividing. */
const RECIPROCALS = Float64Array.from({ length: 4096 }, (_, m) => 1 / (m + 1));
/** Piece widths are rounded up to this grid before `termsFor` (its answers are cached). */
const WIDTH_GRID = 8;
/** A single piece up to this width; wider ranges are split into pieces of PIECE_WIDTH. */
const PIECE_WIDTH = 20;
export const SINGLE_PIECE_MAX_WIDTH = PIECE_WIDTH;

const termCache = new Map<number, number>();

/** The fewest terms M with P(Poisson(r) > M) <= TAIL: a piece of width r needs M + 1 coefficients. */
export function termsFor(width: number): number {
  const r = Math.ceil(width * WIDTH_GRID) / WIDTH_GRID;
  const cached = termCache.get(r);
  if (cached !== undefined) return cached;
  // P(Poisson(r) > m) <= pmf(m + 1) / (1 - r / (m + 2)) once m + 2 > r (the terms above decrease at
  // least geometrically); the pmf in log space, so a wide piece does not overflow exp(r)
  let m = 0;
  let logNextPmf = -r + Math.log(r); // log pmf(1)
  while (!(m + 2 > r && Math.exp(logNextPmf) / (1 - r / (m + 2)) <= TAIL) && m < 100_000) {
    m++;
    logNextPmf += Math.log(r) - Math.log(m + 1);
  }
  termCache.set(r, m);
  return m;
}

/**
 * Where a series is written: `pieces` piece headers (shift s, coefficient count) then coefficients,
 * appended to the caller's growing Float64 store. Returns the number of values written.
 */
export interface SeriesWriter {
  /** Makes room for `count` more values and returns the index of the first. */
  reserve(count: number): number;
  values(): Float64Array<ArrayBufferLike>;
}

/**
 * Writes the series of sum_k exp(v_k) exp(g x_k) for the first `count` entries of `logWeights` (v)
 * and `exponents` (x >= 0) at `writer` as [pieceCount, (shift, offset, terms, A_0..A_{terms-1})...].
 * `floor`: a lower bound of S(g) on [0, 1], against which negligible terms are dropped.
 */
export function writeExponentialSeries(
  logWeights: Float64Array,
  exponents: Float64Array,
  count: number,
  floor: number,
  writer: SeriesWriter,
): void {
  let range = 0;
  for (let k = 0; k < count; k++) if (exponents[k]! > range) range = exponents[k]!;
  const single = range <= SINGLE_PIECE_MAX_WIDTH;
  const pieceWidth = single ? range : PIECE_WIDTH;
  const pieceCount = single ? 1 : Math.floor(range / PIECE_WIDTH) + 1;
  const terms = Math.min(termsFor(pieceWidth) + 1, RECIPROCALS.length);
  const start = writer.reserve(1 + pieceCount * (HEADER + terms));
  const out = writer.values();
  out[start] = pieceCount;
  if (accumulated.length < pieceCount * terms) accumulated = new Float64Array(pieceCount * terms * 2);
  accumulated.fill(0, 0, pieceCount * terms);
  const negligible = (NEGLIGIBLE * floor) / count;
  const logNegligible = Math.log(negligible);
  // the classes that count, by piece and within a piece by exponent (a counting sort into
  // BUCKETS slots a piece), so each piece's classes are summed four at a time, with neighbours
  // that need about as many terms
  const slots = pieceCount * BUCKETS;
  const slotsPerUnit = BUCKETS / (pieceWidth > 0 ? pieceWidth : 1);
  if (order.length < count) {
    order = new Int32Array(count * 2);
    slotOfClass = new Int32Array(count * 2);
  }
  if (slotStarts.length < slots + 1) slotStarts = new Int32Array(slots * 2 + 1);
  slotStarts.fill(0, 0, slots + 1);
  for (let k = 0; k < count; k++) {
    // the class's whole share of S(g) is at most exp(v + x) (g <= 1)
    const slot =
      logWeights[k]! + exponents[k]! < logNegligible ? -1 : slotOf(exponents[k]!, single, pieceCount, slotsPerUnit);
    slotOfClass[k] = slot;
    if (slot >= 0) slotStarts[slot + 1]!++;
  }
  for (let slot = 0; slot < slots; slot++) slotStarts[slot + 1]! += slotStarts[slot]!;
  if (filled.length < slots) filled = new Int32Array(slots * 2);
  filled.set(slotStarts.subarray(0, slots));
  for (let k = 0; k < count; k++) {
    const slot = slotOfClass[k]!;
    if (slot >= 0) order[filled[slot]!++] = k;
  }
  for (let p = 0; p < pieceCount; p++) {
    const shift = p * PIECE_WIDTH;
    const end = slotStarts[(p + 1) * BUCKETS]!;
    const first = slotStarts[p * BUCKETS]!;
    // the piece's coefficients are relative to its largest weight, exp(offset): a weight far below
    // 1 whose exponent is thousands (branches thousands of nats apart) is not lost to underflow
    let offset = first < end ? -Infinity : 0;
    for (let at = first; at < end; at++) if (logWeights[order[at]!]! > offset) offset = logWeights[order[at]!]!;
    // a stored term's share of S(g) is at most term exp(shift + offset)
    const bound = negligible * Math.exp(-(shift + offset));
    let at = first;
    for (; at + 4 <= end; at += 4)
      addFourSeries(order, at, logWeights, exponents, shift, offset, p * terms, terms, bound);
    for (; at < end; at++)
      addSeries(logWeights[order[at]!]! - offset, exponents[order[at]!]! - shift, p * terms, terms, bound);
    const header = start + 1 + p * (HEADER + terms);
    out[header] = shift;
    out[header + 1] = offset;
    out[header + 2] = terms;
    out.set(accumulated.subarray(p * terms, (p + 1) * terms), header + HEADER);
  }
}

/** A piece's header: its shift s, its log offset c (the coefficients are relative to exp(c)) and its coefficient count. */
const HEADER = 3;
/** The coefficients as they are summed (reused: the writer's store may move as it grows). */
let accumulated = new Float64Array(1024);
/** Slots a piece's exponent range is sorted into. */
const BUCKETS = 16;
/** The classes that count, by slot, and where each slot starts (scratch, reused). */
let order = new Int32Array(1024);
let slotOfClass = new Int32Array(1024);
let slotStarts = new Int32Array(64);
let filled = new Int32Array(64);

/** The slot of exponent x: its piece's BUCKETS slots, by x within the piece. */
function slotOf(x: number, single: boolean, pieceCount: number, slotsPerUnit: number): number {
  // x >= 0, so truncation (| 0) is the floor
  const piece = single ? 0 : Math.min(pieceCount - 1, (x / PIECE_WIDTH) | 0);
  const within = ((x - piece * PIECE_WIDTH) * slotsPerUnit) | 0;
  return piece * BUCKETS + (within < BUCKETS ? within : BUCKETS - 1);
}

/**
 * Adds one class's terms w y^m / m! (w = exp(logWeight)) to the coefficients from `from`. The rest
 * after term m is below term (m + 2) / (m + 2 - y) once m + 1 > y: it stops once that is below
 * `bound`.
 */
function addSeries(logWeight: number, y: number, from: number, terms: number, bound: number): void {
  let term = expNonPositive(logWeight);
  for (let m = 0; m < terms; m++) {
    accumulated[from + m]! += term;
    term *= y * RECIPROCALS[m]!;
    if (m > y && term * (m + 2) < bound * (m + 2 - y)) break;
  }
}

/**
 * addSeries for the four classes order[at..at+3] of one piece at once: four independent products
 * per step instead of one chain of dependent multiplications (the table's build is bound by that
 * chain's latency, issue 29). It stops once every class's rest is below `bound`, so a class may
 * add a few more of its terms than addSeries would: each is positive and the bound only tighter.
 */
function addFourSeries(
  order: Int32Array,
  at: number,
  logWeights: Float64Array,
  exponents: Float64Array,
  shift: number,
  offset: number,
  from: number,
  terms: number,
  bound: number,
): void {
  const a = order[at]!;
  const b = order[at + 1]!;
  const c = order[at + 2]!;
  const d = order[at + 3]!;
  const ya = exponents[a]! - shift;
  const yb = exponents[b]! - shift;
  const yc = exponents[c]! - shift;
  const yd = exponents[d]! - shift;
  let ta = expNonPositive(logWeights[a]! - offset);
  let tb = expNonPositive(logWeights[b]! - offset);
  let tc = expNonPositive(logWeights[c]! - offset);
  let td = expNonPositive(logWeights[d]! - offset);
  const yMax = Math.max(ya, yb, yc, yd);
  for (let m = 0; m < terms; m++) {
    accumulated[from + m]! += ta + tb + (tc + td);
    const r = RECIPROCALS[m]!;
    ta *= ya * r;
    tb *= yb * r;
    tc *= yc * r;
    td *= yd * r;
    // the rest's bound holds once m + 1 > y for each class
    const m2 = m + 2;
    if (
      m > yMax &&
      ta * m2 < bound * (m2 - ya) &&
      tb * m2 < bound * (m2 - yb) &&
      tc * m2 < bound * (m2 - yc) &&
      td * m2 < bound * (m2 - yd)
    )
      break;
  }
}

/**
 * log S(g) of the series at `at` in `values` (written by writeExponentialSeries), for g in [0, 1].
 * Returns the index just past the series as well, through `next`.
 */
export function logExponentialSeries(
  values: Float64Array<ArrayBufferLike>,
  at: number,
  g: number,
  next: { index: number },
): number {
  const pieceCount = values[at]!;
  let index = at + 1;
  if (pieceCount === 1) {
    const terms = values[index + 2]!;
    const value = horner(values, index + HEADER, terms, g);
    next.index = index + HEADER + terms;
    return Math.log(value) + values[index + 1]!;
  }
  // sum_p exp(g s_p) H_p(g), the shifts ascending. Below DIRECT_SUM_MAX_EXPONENT exp(g s_p) is far
  // from overflow and the sum is taken as it is; above it (branches thousands of nats apart) in log
  // space, each piece's log g s_p + log H_p(g) against the largest so far.
  if (g * (pieceCount - 1) * PIECE_WIDTH <= DIRECT_SUM_MAX_EXPONENT) {
    let sum = 0;
    for (let p = 0; p < pieceCount; p++) {
      const shift = values[index]!;
      const terms = values[index + 2]!;
      sum += Math.exp(g * shift + values[index + 1]!) * horner(values, index + HEADER, terms, g);
      index += HEADER + terms;
    }
    next.index = index;
    return Math.log(sum);
  }
  let largest = -Infinity;
  let scaledSum = 0; // sum_p exp(log term_p - largest)
  for (let p = 0; p < pieceCount; p++) {
    const shift = values[index]!;
    const terms = values[index + 2]!;
    const logTerm = g * shift + values[index + 1]! + Math.log(horner(values, index + HEADER, terms, g));
    index += HEADER + terms;
    if (logTerm === -Infinity) continue; // a piece no class falls in
    if (logTerm > largest) {
      scaledSum = scaledSum * Math.exp(largest - logTerm) + 1;
      largest = logTerm;
    } else scaledSum += Math.exp(logTerm - largest);
  }
  next.index = index;
  return largest + Math.log(scaledSum);
}

/** exp of at most this is far from float64's overflow (exp(709.78)): the pieces' direct sum. */
const DIRECT_SUM_MAX_EXPONENT = 600;

/**
 * sum_{m < terms} values[from + m] g^m as E(g^2) + g O(g^2), its even and odd coefficients each by
 * Horner's rule: two independent chains of multiply-adds instead of one, which a knob turn's
 * evaluation of every frame is bound by (issue 29). Every term is positive for g in [0, 1], so
 * neither chain nor their sum cancels: the value is still within about `terms` ulps.
 */
function horner(values: Float64Array<ArrayBufferLike>, from: number, terms: number, g: number): number {
  const g2 = g * g;
  let even = 0;
  let odd = 0;
  let m = from + terms - 1;
  // the top coefficient's index is even: it starts the even chain
  if (((terms - 1) & 1) === 0 && terms > 0) even = values[m--]!;
  for (; m > from; m -= 2) {
    odd = odd * g2 + values[m]!;
    even = even * g2 + values[m - 1]!;
  }
  return even + g * odd;
}
