import { describe, expect, it } from 'vitest';
import { brownianMaxAbsCdf } from '../../src-shared/metrics/cumulative-tests';
import {
  formatBoundUp,
  formatIntervalOutward,
  formatMetricValue,
  formatProbability,
  formatPValue,
} from '../../src-shared/metrics/metric-format';

describe('how computed numbers are written', () => {
  it('P-values below what 1 - CDF can resolve are "< 1e-15", never 2.22e-16', () => {
    // A KS statistic of 9: 1 - D(9) is 0 or one double-precision step above it.
    const p = 1 - brownianMaxAbsCdf(9);
    expect(p).toBeLessThan(1e-15);
    expect(formatPValue(p)).toBe('< 1e-15');
    expect(formatPValue(2.220446049250313e-16)).toBe('< 1e-15');
    expect(formatPValue(3.2e-7)).toBe('3.2e-7');
    expect(formatPValue(0.0312)).toBe('0.0312');
    expect(formatMetricValue('KS P-value(top-label, ...)', 2.220446049250313e-16)).toBe('< 1e-15');
  });

  it('probabilities near 1 or 0 are not rounded to certainty', () => {
    expect(formatProbability(0.99996)).toBe('> 0.999');
    expect(formatProbability(1)).toBe('1.000');
    expect(formatProbability(0.00002)).toBe('< 0.001');
    expect(formatProbability(0)).toBe('0.000');
    expect(formatProbability(0.4567)).toBe('0.457');
  });

  it('metric values: fixed decimals, powers of ten when the decimals would hide the value', () => {
    expect(formatMetricValue('ECE(...)', 0.01534)).toBe('0.0153');
    expect(formatMetricValue('ECE(...)', 0.00001234)).toBe('1.23e-5');
    expect(formatMetricValue('x', 123456)).toBe('1.23e+5');
    expect(formatMetricValue('x', null)).toBe('—');
    expect(formatMetricValue('x', Infinity)).toBe('∞');
  });

  it('an interval is written outward, so it shows the estimate it contains however that is rounded', () => {
    // widened to its estimate 0.0412346: to nearest, hi would read 0.04123, below the value's 0.0412346
    expect(formatIntervalOutward(0.0311, 0.0412346)).toBe('[0.03110, 0.04124]');
    expect(formatIntervalOutward(0.0412346, 0.05)).toBe('[0.04123, 0.05000]');
    expect(formatIntervalOutward(-0.012345, -0.0012345)).toBe('[-0.01235, -0.001234]');
    expect(formatIntervalOutward(0, 1)).toBe('[0.000, 1.000]');
    expect(formatIntervalOutward(0.99995, 0.99999)).toBe('[0.9999, 1.000]');
    for (let i = 0; i < 2000; i++) {
      const value = Math.exp(-12 * Math.random());
      const [lo, hi] = formatIntervalOutward(value, value).slice(1, -1).split(', ').map(Number);
      const shown = Number(value.toPrecision(6));
      expect(lo! <= shown && shown <= hi!, `${value}`).toBe(true);
    }
  });

  it('a bound is rounded up to three figures, never understated', () => {
    expect(formatBoundUp(0.14231)).toBe('0.143');
    expect(formatBoundUp(0.142)).toBe('0.142');
    expect(formatBoundUp(2.0001e-5)).toBe('0.0000201');
    expect(formatBoundUp(0)).toBe('0');
  });
});
