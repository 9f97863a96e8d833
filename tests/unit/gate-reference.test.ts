/**
 * The gate against tests/fixtures/reference/dynamics.md (scipy 1.10.1 / python-control 0.10.2, float64).
 * Each value is checked to half a unit in the last digit printed there.
 *
 * Input convention (written here as the reference asks): the app fuses frame n with the state
 * x[n] = Phi(h) x[n-1] + Gamma(h) u[n], i.e. frame n's own u* already moves the gate at frame n.
 * scipy / python-control use x[k+1] = Phi x[k] + Gamma u[k]; the app's outputs are theirs one frame
 * earlier, so peak and settling times read one frame earlier and the rise time is unchanged.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GATE_SETTINGS,
  clippingBound,
  continuousResponseMetrics,
  discreteResponseMetrics,
  discreteTransferFunction,
  frequencyResponseAt,
  sampledStepInfo,
  stepSeries,
  zohTransitionInto,
  type GateSettings,
} from '../../src-shared/gate';

/** Asserts |actual - expected| <= half a unit in the last printed digit of `printed`. */
function expectPrinted(actual: number, printed: string): void {
  const expected = Number(printed);
  const decimals = printed.includes('.') ? printed.split('.')[1]!.replace(/[eE].*$/, '').length : 0;
  const tolerance = 0.5 * 10 ** -decimals * (1 + 1e-9);
  expect(Math.abs(actual - expected), `${actual} vs ${printed}`).toBeLessThanOrEqual(tolerance);
}

const h = 1 / 30;
const settings = (zeta: number, wnRadPerSec: number, extra: Partial<GateSettings> = {}): GateSettings => ({
  ...DEFAULT_GATE_SETTINGS,
  zeta,
  wnRadPerSec,
  ...extra,
});

function phi(zeta: number, wn: number): Float64Array {
  const out = new Float64Array(4);
  zohTransitionInto(zeta, wn, h, out);
  return out;
}

describe('ZOH Phi and Gamma', () => {
  const cases: Array<[number, number, string[], string[]]> = [
    [
      0.7,
      6,
      ['0.981802606144', '0.028880181029', '-1.039686517043', '0.739209085501'],
      ['0.018197393856', '1.039686517043'],
    ],
    [
      1.0,
      6,
      ['0.982476903694', '0.027291025103', '-0.982476903694', '0.654984602462'],
      ['0.017523096306', '0.982476903694'],
    ],
    [
      1.5,
      6,
      ['0.983518120879', '0.024900238598', '-0.896408589544', '0.535313826107'],
      ['0.016481879121', '0.896408589544'],
    ],
    [
      0.7,
      50,
      ['0.399066080773', '0.008097109354', '-20.24277338474', '-0.167731574000'],
      ['0.600933919227', '20.242773384735'],
    ],
  ];
  for (const [zeta, wn, phiPrinted, gammaPrinted] of cases) {
    it(`zeta ${zeta}, wn ${wn}, h 1/30`, () => {
      const p = phi(zeta, wn);
      phiPrinted.forEach((printed, i) => expectPrinted(p[i]!, printed));
      // Gamma = [1 - Phi11, -Phi21] (DC gain 1 built in).
      expectPrinted(1 - p[0]!, gammaPrinted[0]!);
      expectPrinted(-p[2]!, gammaPrinted[1]!);
    });
  }

  it('spectral radius at zeta 0.7, wn 50 is 0.311403', () => {
    const p = phi(0.7, 50);
    // complex eigenvalues: |lambda| = sqrt(det Phi)
    const det = p[0]! * p[3]! - p[1]! * p[2]!;
    expectPrinted(Math.sqrt(det), '0.311403');
  });

  it('poles 0.860505845822 +- 0.123747447493 j at zeta 0.7, wn 6', () => {
    const { den } = discreteTransferFunction(settings(0.7, 6), h);
    const re = -den[1] / 2;
    const im = Math.sqrt(den[2] - re * re);
    expectPrinted(re, '0.860505845822');
    expectPrinted(im, '0.123747447493');
  });
});

describe('discrete transfer functions (scipy convention)', () => {
  it('ZOH num/den', () => {
    const { num, den } = discreteTransferFunction(settings(0.7, 6), h);
    expectPrinted(num[0], '0');
    expectPrinted(num[1], '0.018197393856');
    expectPrinted(num[2], '0.016574655955');
    expectPrinted(den[1], '-1.721011691645');
    expectPrinted(den[2], '0.755783741456');
  });
  it('Tustin num/den', () => {
    const { num, den } = discreteTransferFunction(settings(0.7, 6, { discretization: 'tustin' }), h);
    ['0.008695652174', '0.017391304348', '0.008695652174'].forEach((p, i) => expectPrinted(num[i]!, p));
    expectPrinted(den[1], '-1.721739130435');
    expectPrinted(den[2], '0.75652173913');
  });
  it('Tustin pre-warped at wn num/den', () => {
    const { num, den } = discreteTransferFunction(
      settings(0.7, 6, { discretization: 'tustin', tustinPrewarp: true }),
      h,
    );
    ['0.008749878346', '0.017499756693', '0.008749878346'].forEach((p, i) => expectPrinted(num[i]!, p));
    expectPrinted(den[1], '-1.720821093182');
    expectPrinted(den[2], '0.755820606568');
  });
});

describe('continuous step-response metrics, zeta 0.7, wn 6', () => {
  const m = continuousResponseMetrics(settings(0.7, 6));
  it('overshoot, peak and peak time', () => {
    expectPrinted(m.overshootPercent, '4.598791026');
    expectPrinted(m.peakValue, '1.045987910');
    expectPrinted(m.peakTimeSeconds!, '0.733184937');
  });
  it('10-90 % rise time', () => {
    expectPrinted(m.riseTimeSeconds, '0.354366978');
    expectPrinted(m.t10Seconds, '0.084139191');
    expectPrinted(m.t90Seconds, '0.438506169');
  });
  it('2 % settling time is exact, not 4/(zeta wn)', () => {
    expectPrinted(m.settlingTimeSeconds, '0.996465395');
    expect(Math.abs(m.settlingTimeSeconds - 4 / (0.7 * 6))).toBeGreaterThan(0.04);
  });
  it('-3 dB bandwidth (20 log10 |G| = -3 exactly) and resonant peak', () => {
    expectPrinted(m.bandwidthRadPerSec!, '6.053250103');
    expectPrinted(m.resonantPeak, '1.000200060');
    expectPrinted(m.resonantFrequencyRadPerSec!, '0.848528137');
  });
});

describe('discrete step metrics at h = 1/30 (python-control step_info, 151 samples)', () => {
  const s = settings(0.7, 6);
  it('scipy convention reproduces step_info', () => {
    const series = stepSeries(s, { system: 'discrete', hSeconds: h, frames: 150, convention: 'scipy' });
    expect(series.g.length).toBe(151);
    const info = sampledStepInfo(series.g, series.tSeconds);
    expectPrinted(info.riseTimeSeconds!, '0.366666667');
    expectPrinted(info.settlingTimeSeconds!, '1.0');
    expectPrinted(info.peakValue, '1.045987892');
    expectPrinted(info.peakTimeSeconds, '0.733333333');
    expectPrinted(info.overshootPercent, '4.598789204');
  });
  it('app convention: peak and settling one frame earlier, rise unchanged', () => {
    const app = discreteResponseMetrics(s, h, 'app');
    expectPrinted(app.riseTimeSeconds!, '0.366666667');
    expectPrinted(app.settlingTimeSeconds! + h, '1.0');
    expectPrinted(app.peakTimeSeconds + h, '0.733333333');
    expectPrinted(app.peakValue, '1.045987892');
    const scipy = discreteResponseMetrics(s, h, 'scipy');
    expectPrinted(scipy.settlingTimeSeconds!, '1.0');
    expectPrinted(scipy.peakTimeSeconds, '0.733333333');
  });
});

describe('Bode magnitudes and phases, zeta 0.7, wn 6', () => {
  const table: Array<[number, [string, string], [string, string], [string, string]]> = [
    [1, ['+0.001475', '-13.49573'], ['+0.001075', '-14.45069'], ['+0.001474', '-13.49701']],
    [3, ['-0.222221', '-43.02507'], ['-0.225820', '-45.88986'], ['-0.223014', '-43.06480']],
    [6, ['-2.922561', '-90.00000'], ['-2.937004', '-95.72904'], ['-2.951680', '-90.27347']],
    [10, ['-9.347478', '-127.30395'], ['-9.387907', '-136.85021'], ['-9.491910', '-127.84818']],
    [20, ['-20.934649', '-155.22486'], ['-21.102363', '-174.29628'], ['-21.591465', '-156.19670']],
  ];
  for (const [w, continuous, zoh, tustin] of table) {
    it(`w = ${w} rad/s: continuous, ZOH (scipy convention) and Tustin`, () => {
      const c = frequencyResponseAt(settings(0.7, 6), w, { system: 'continuous', hSeconds: h });
      expectPrinted(c.magnitudeDb, continuous[0]);
      expectPrinted(c.phaseDeg, continuous[1]);
      const z = frequencyResponseAt(settings(0.7, 6), w, { system: 'discrete', hSeconds: h, convention: 'scipy' });
      expectPrinted(z.magnitudeDb, zoh[0]);
      expectPrinted(z.phaseDeg, zoh[1]);
      const t = frequencyResponseAt(settings(0.7, 6, { discretization: 'tustin' }), w, {
        system: 'discrete',
        hSeconds: h,
      });
      expectPrinted(t.magnitudeDb, tustin[0]);
      expectPrinted(t.phaseDeg, tustin[1]);
    });
  }
  it('app convention for ZOH leads scipy by exactly w h', () => {
    const app = frequencyResponseAt(settings(0.7, 6), 10, { system: 'discrete', hSeconds: h, convention: 'app' });
    const scipy = frequencyResponseAt(settings(0.7, 6), 10, { system: 'discrete', hSeconds: h, convention: 'scipy' });
    expect(app.magnitudeDb).toBe(scipy.magnitudeDb);
    expect(app.phaseDeg - scipy.phaseDeg).toBeCloseTo((10 * h * 180) / Math.PI, 10);
  });
});

describe('clipping bound', () => {
  it('K/(1-K): 4.82 % at zeta 0.7, 59.3 % at zeta 0.3, 0 for zeta >= 1', () => {
    expectPrinted(100 * clippingBound(0.7), '4.82');
    expectPrinted(100 * clippingBound(0.3), '59.3');
    expect(clippingBound(1)).toBe(0);
    expect(clippingBound(2.5)).toBe(0);
  });
});

describe('discrete overshoot in the app convention', () => {
  it('is measured from the rest value before the step, so it equals the scipy-convention figure', () => {
    const s = settings(0.7, 6);
    expectPrinted(discreteResponseMetrics(s, h, 'app').overshootPercent, '4.598789204');
  });
});
