/**
 * Exact zero-order-hold transition of the unit-mass gate, written for the error e = g - u:
 *   [e, v](t + h) = Phi(h) [e, v](t),   Phi = e^{A h},   A = [[0, 1], [-wn^2, -2 zeta wn]].
 * Closed forms (tests/fixtures/reference/dynamics.md): e^{A h} = E [c I + s (A + sigma I)], E = exp(-sigma h),
 * with c, s from cos/sin (under-damped), 1/h (critical) or cosh/sinh (over-damped).
 * Near zeta = 1 one series path (|q| < 1e-6, q = (zeta^2 - 1)(wn h)^2) avoids the 0/0 of wd -> 0.
 * Over-damped terms are formed from exp(-(sigma -+ mu) h) directly, with sigma - mu = wn^2/(sigma + mu),
 * so nothing overflows or cancels for large zeta.
 *
 * Writes [Phi11, Phi12, Phi21, Phi22] into `out` at `offset`.
 */
export function zohTransitionInto(
  zeta: number,
  wnRadPerSec: number,
  hSeconds: number,
  out: Float64Array,
  offset = 0,
): void {
  const wn = wnRadPerSec;
  const h = hSeconds;
  const sigma = zeta * wn;
  const wnSq = wn * wn;
  const q = (zeta * zeta - 1) * (wn * h) * (wn * h);
  let p11: number;
  let p12: number;
  let p22: number;
  if (Math.abs(q) < 1e-6) {
    const e = Math.exp(-sigma * h);
    const ec = e * (1 + q / 2 + (q * q) / 24);
    const es = e * h * (1 + q / 6 + (q * q) / 120);
    p11 = ec + sigma * es;
    p12 = es;
    p22 = ec - sigma * es;
  } else if (zeta < 1) {
    const wd = wn * Math.sqrt(1 - zeta * zeta);
    const e = Math.exp(-sigma * h);
    const ec = e * Math.cos(wd * h);
    const es = (e * Math.sin(wd * h)) / wd;
    p11 = ec + sigma * es;
    p12 = es;
    p22 = ec - sigma * es;
  } else {
    const mu = wn * Math.sqrt(zeta * zeta - 1);
    const slowRate = wnSq / (sigma + mu); // = sigma - mu without cancellation
    const fastRate = sigma + mu;
    const a = Math.exp(-slowRate * h);
    const b = Math.exp(-fastRate * h);
    const twoMu = 2 * mu;
    p11 = (a * fastRate - b * slowRate) / twoMu;
    p12 = (a - b) / twoMu;
    p22 = (b * fastRate - a * slowRate) / twoMu;
  }
  out[offset] = p11;
  out[offset + 1] = p12;
  out[offset + 2] = -wnSq * p12;
  out[offset + 3] = p22;
}
