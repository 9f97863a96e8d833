import { KnobError } from '../errors';

/**
 * Lock-in estimation for the frequency probe (issue 17): the gate's response H = G/U at a
 * modulation frequency f, from its input u (u*) and output g sampled at a constant rate, over whole
 * periods only. Each signal's complex amplitude at f is
 *   Z = (2/N) sum_n x[n] e^{-j 2 pi f t_n},  t_n = n / rate,
 * which over whole periods is exactly the Fourier coefficient (a constant contributes nothing), so
 * H = Z_g / Z_u; magnitude |H| (also in dB, the gate's DC gain being 1) and phase arg H in degrees.
 * Standard errors by batch means: the window is cut into `batches` runs of whole periods, H is
 * estimated on each, and the spread of the batch estimates over sqrt(batches) is taken as the
 * error of the pooled estimate (the whole window's ratio, which their mean approximates). Pass the
 * signals after the transient: the window is the last whole batches of what is given. Harmonic distortion THD = sqrt(sum_{k=2..K} |Z_g(k f)|^2) / |Z_g(f)| says when the
 * response stopped being linear (clipping); `nonlinear` flags it above `distortionLimit`.
 */
export interface LockInOptions {
  /** Samples per second (the frame rate). */
  rateHz: number;
  /** Modulation frequency; `periodsPerBatch` of its periods must span a whole number of samples. */
  frequencyHz: number;
  /** Batch-means batches (default 8, at least 2). */
  batches?: number;
  /** Harmonics in the distortion check (default 5: 2f .. 5f, those below Nyquist). */
  harmonics?: number;
  /** THD above which the response is flagged non-linear (default 0.05). */
  distortionLimit?: number;
}

export interface LockInResult {
  frequencyHz: number;
  magnitude: number;
  magnitudeDb: number;
  phaseDeg: number;
  /** Standard errors of the batch means (NaN with fewer than 2 batches). */
  magnitudeStandardError: number;
  magnitudeDbStandardError: number;
  phaseDegStandardError: number;
  /** Samples and whole periods analysed (the last full batches of the window). */
  samples: number;
  periods: number;
  totalHarmonicDistortion: number;
  nonlinear: boolean;
}

/** The complex amplitude of x[from .. from + count) at frequency f (whole periods), as [re, im]. */
function complexAmplitude(
  x: ArrayLike<number>,
  from: number,
  count: number,
  f: number,
  rate: number,
): [number, number] {
  let re = 0;
  let im = 0;
  for (let n = 0; n < count; n++) {
    const angle = (2 * Math.PI * f * (from + n)) / rate;
    re += x[from + n]! * Math.cos(angle);
    im -= x[from + n]! * Math.sin(angle);
  }
  return [(2 * re) / count, (2 * im) / count];
}

/** The ratio a / b of complex numbers [re, im]. */
function divide([ar, ai]: [number, number], [br, bi]: [number, number]): [number, number] {
  const d = br * br + bi * bi;
  return [(ar * br + ai * bi) / d, (ai * br - ar * bi) / d];
}

export function lockIn(u: ArrayLike<number>, g: ArrayLike<number>, options: LockInOptions): LockInResult {
  const { rateHz: rate, frequencyHz: f } = options;
  const batches = options.batches ?? 8;
  if (u.length !== g.length) throw new KnobError('INVALID_INPUT', `${u.length} inputs for ${g.length} gate values`);
  if (!(rate > 0 && f > 0 && f < rate / 2))
    throw new KnobError('INVALID_INPUT', `the modulation ${f} Hz must lie between 0 and Nyquist (${rate / 2} Hz)`);
  if (!Number.isInteger(batches) || batches < 2)
    throw new KnobError('INVALID_INPUT', `batches must be a whole number >= 2`);
  // the shortest run of whole periods spanning a whole number of samples
  const samplesPerPeriod = rate / f;
  let periodsPerBatch = 1;
  while (
    Math.abs(periodsPerBatch * samplesPerPeriod - Math.round(periodsPerBatch * samplesPerPeriod)) >
    1e-9 * periodsPerBatch * samplesPerPeriod
  ) {
    if (++periodsPerBatch > 1000)
      throw new KnobError('INVALID_INPUT', `${f} Hz at ${rate} Hz has no whole number of samples in 1000 periods`);
  }
  const batchSamples = Math.round(periodsPerBatch * samplesPerPeriod);
  const usable = Math.floor(g.length / batchSamples);
  if (usable < batches)
    throw new KnobError(
      'INVALID_INPUT',
      `${g.length} samples hold ${usable} batches of ${periodsPerBatch} period(s) at ${f} Hz; ${batches} are needed`,
    );
  for (let i = 0; i < g.length; i++)
    if (!Number.isFinite(u[i]!) || !Number.isFinite(g[i]!))
      throw new KnobError('INVALID_INPUT', `sample ${i} is not finite`);
  // `batches` runs of `per` whole batches each, at the end of the signal (what is left out is
  // at the start)
  const per = Math.floor(usable / batches);
  const samples = per * batches * batchSamples;
  const start = g.length - samples;
  // each signal's amplitude per batch, once; over the whole window it is their mean (equal lengths)
  const count = per * batchSamples;
  const amplitudes = (x: ArrayLike<number>) =>
    Array.from({ length: batches }, (_, b) => complexAmplitude(x, start + b * count, count, f, rate));
  const mean = (zs: Array<[number, number]>): [number, number] => [
    zs.reduce((sum, z) => sum + z[0], 0) / zs.length,
    zs.reduce((sum, z) => sum + z[1], 0) / zs.length,
  ];
  const zuBatches = amplitudes(u);
  const zgBatches = amplitudes(g);
  const zu = mean(zuBatches);
  const zg = mean(zgBatches);
  // a constant input sums to rounding (1e-16 of its level), not to 0
  let level = 0;
  for (let n = start; n < g.length; n++) level = Math.max(level, Math.abs(u[n]!));
  const hasComponent = (z: [number, number]) => Math.hypot(z[0], z[1]) > 1e-9 * level;
  if (!hasComponent(zu)) throw new KnobError('INVALID_INPUT', `the input has no component at ${f} Hz`);
  const h = divide(zg, zu);
  const magnitude = Math.hypot(h[0], h[1]);
  const phase = Math.atan2(h[1], h[0]);
  const batchMagnitudes: number[] = [];
  const batchPhases: number[] = [];
  for (let b = 0; b < batches; b++) {
    if (!hasComponent(zuBatches[b]!))
      throw new KnobError('INVALID_INPUT', `batch ${b} of the input has no component at ${f} Hz`);
    const hb = divide(zgBatches[b]!, zuBatches[b]!);
    batchMagnitudes.push(Math.hypot(hb[0], hb[1]));
    // each batch's phase taken nearest the overall one (no wrap between them)
    let difference = Math.atan2(hb[1], hb[0]) - phase;
    difference -= 2 * Math.PI * Math.round(difference / (2 * Math.PI));
    batchPhases.push(phase + difference);
  }
  const standardError = (values: number[]) => {
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1);
    return Math.sqrt(variance / values.length);
  };
  const magnitudeStandardError = standardError(batchMagnitudes);
  // distortion of g's response: harmonics below Nyquist
  let harmonicPower = 0;
  for (let k = 2; k <= (options.harmonics ?? 5) && k * f < rate / 2; k++) {
    const z = complexAmplitude(g, start, samples, k * f, rate);
    harmonicPower += z[0] * z[0] + z[1] * z[1];
  }
  // g with no response at f but harmonics is as non-linear as it gets; with neither, it is flat
  const fundamentalAmplitude = Math.hypot(zg[0], zg[1]);
  const totalHarmonicDistortion =
    fundamentalAmplitude > 0 ? Math.sqrt(harmonicPower) / fundamentalAmplitude : harmonicPower > 0 ? Infinity : 0;
  return {
    frequencyHz: f,
    magnitude,
    magnitudeDb: 20 * Math.log10(magnitude),
    phaseDeg: (phase * 180) / Math.PI,
    magnitudeStandardError,
    // d(20 log10 m) = 20 / (m ln 10) dm
    magnitudeDbStandardError: (20 / (magnitude * Math.LN10)) * magnitudeStandardError,
    phaseDegStandardError: (standardError(batchPhases) * 180) / Math.PI,
    samples,
    periods: Math.round((samples * f) / rate),
    totalHarmonicDistortion,
    nonlinear: totalHarmonicDistortion > (options.distortionLimit ?? 0.05),
  };
}
