/**
 * Issue 30, label-free estimates: `knob estimate` on the embedded stream with the shipped model,
 * clean (the labelled reference) and then severities 1 to 5 of a corruption held out of training,
 * 500 frames each. The estimators read no label after the reference; the labels, revealed
 * afterwards, give each severity's true accuracy. One table a corruption, with mean confidence
 * beside ATC, DoC and the calibrated confidence; where mean confidence is off the truth by more
 * than 3 points (the model miscalibrated under the shift), ATC is closer on average.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { knob, knobFailureLine, steppedCorruptionRun } from '../support/knob-cli';

const dir = mkdtempSync(join(tmpdir(), 'knob-estimate-'));
const LEVELS = '0:0,500:1,1000:2,1500:3,2000:4,2500:5';

interface EstimateJson {
  groups: Array<{
    key: string;
    trueAccuracy: number;
    estimates: Array<{ method: string; value: number; low: number; high: number }>;
  }>;
  summary: Array<{ method: string; meanAbsoluteError: number; covered: number; groups: number }>;
}

describe('knob estimate: accuracy without labels, judged against the labels revealed afterwards', () => {
  for (const corruption of ['shot_noise', 'defocus_blur', 'zoom_blur'])
    it(`${corruption}: ATC closer to the truth than mean confidence where the model is miscalibrated`, async () => {
      const out = join(dir, corruption);
      await steppedCorruptionRun(out, corruption, 3000, LEVELS);
      const estimated = await knob('estimate', join(out, 'trace.arrow'), '--reference', '0:500', '--json');
      expect(estimated.status, estimated.stderr).toBe(0);
      const report = JSON.parse(estimated.stdout) as EstimateJson;
      expect(report.groups.map((g) => g.key)).toEqual(['1', '2', '3', '4', '5']);
      const of = (g: EstimateJson['groups'][number], method: string) => g.estimates.find((e) => e.method === method)!;
      const rows = report.groups.map((g) =>
        [
          g.key,
          ...['mean confidence', 'atc', 'doc', 'calibrated confidence'].map((m) => of(g, m).value),
          g.trueAccuracy,
        ]
          .map((v) => (typeof v === 'number' ? (100 * v).toFixed(1) : v))
          .join('\t'),
      );
      console.log(
        `[estimate] ${corruption}\nseverity\tmean conf\tATC\tDoC\tcalibrated\ttrue\n${rows.join('\n')}\n` +
          report.summary
            .map(
              (s) =>
                `${s.method}: MAE ${(100 * s.meanAbsoluteError).toFixed(1)} points, covers ${s.covered} of ${s.groups}`,
            )
            .join('\n'),
      );
      for (const g of report.groups)
        for (const e of g.estimates) {
          expect(e.low, `${g.key} ${e.method}`).toBeLessThanOrEqual(e.value);
          expect(e.high, `${g.key} ${e.method}`).toBeGreaterThanOrEqual(e.value);
        }
      const miscalibrated = report.groups.filter(
        (g) => Math.abs(of(g, 'mean confidence').value - g.trueAccuracy) > 0.03,
      );
      expect(miscalibrated.length, 'severities where mean confidence is off by more than 3 points').toBeGreaterThan(0);
      const error = (method: string) =>
        miscalibrated.reduce((sum, g) => sum + Math.abs(of(g, method).value - g.trueAccuracy), 0) /
        miscalibrated.length;
      expect(error('atc')).toBeLessThan(error('mean confidence'));
    }, 120_000);

  it('refuses a reference with too few labelled frames, naming the window', async () => {
    const trace = join(dir, 'shot_noise', 'trace.arrow');
    expect(knobFailureLine(await knob('estimate', trace, '--reference', '0:50'))).toMatch(
      /the reference window 0:50 has 50 labelled frames; the estimates are fitted on at least 100/,
    );
  });
});
