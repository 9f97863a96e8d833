/**
 * Seeded pseudo-random numbers for everything stochastic (bootstrap, permutation tests, corruptions):
 * mulberry32, 32-bit state, uniform in [0, 1). Same seed, same sequence, on every platform.
 */
export type RandomSource = () => number;

export function seededRandom(seed: number, skippedDraws = 0): RandomSource {
  // The state in a typed array, not a closure variable: a uint32 past 2^30 does not fit a small
  // integer, so each draw stored a new heap number (16 bytes a draw: a threshold calibration's
  // thread spent a tenth of its time collecting them). The sequence is the same.
  // Each draw adds 0x6d2b79f5 to the state (mulberry32's Weyl sequence), so the generator that
  // has made `skippedDraws` draws starts at seed + skippedDraws x 0x6d2b79f5 (mod 2^32): a thread
  // draws its part of a long sequence without drawing what comes before it.
  const skip = Math.imul(skippedDraws % 4294967296, 0x6d2b79f5);
  const state = new Uint32Array([((seed >>> 0) + skip) >>> 0]);
  return () => {
    const next = (state[0]! + 0x6d2b79f5) >>> 0;
    state[0] = next;
    let t = next;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draw (Box-Muller) from a uniform source. */
export function normalDraw(random: RandomSource): number {
  let u = random();
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
