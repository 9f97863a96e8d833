/**
 * Issue 30, calibration over time: `knob timeline` on a recording of the shipped model, the embedded
 * stream clean and then drifting into shot_noise (held out of training) at frame 1,000, severity 4
 * from frame 2,000: every window's figures on its labelled frames with intervals containing them,
 * the accuracy of a window equal to the share of its frames the output got right, and a change
 * point of accuracy found near each onset.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { replay } from '../../src-shared/trace/replay';
import { encodeTraceFile, readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, knobFailureLine, steppedCorruptionRun } from '../support/knob-cli';

const dir = mkdtempSync(join(tmpdir(), 'knob-timeline-'));
const tracePath = join(dir, 'run', 'trace.arrow');

interface TimelineJson {
  windows: Array<{
    firstFrame: number;
    endFrame: number;
    labelledFrames: number;
    values: Array<{ metric: string; value: number; low: number; high: number } | null>;
  }>;
  changePoints: Array<{ frame: number; accuracyBefore: number; accuracyAfter: number; pValue: number }>;
}

beforeAll(async () => {
  await steppedCorruptionRun(join(dir, 'run'), 'shot_noise', 3000, '0:0,1000:2,2000:4');
}, 120_000);

describe('knob timeline', () => {
  it('windows with intervals, accuracy as counted, change points at the onsets', async () => {
    const result = await knob('timeline', tracePath, '--window-frames', '500', '--json');
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as TimelineJson;
    expect(report.windows.map((w) => w.firstFrame)).toEqual([0, 500, 1000, 1500, 2000, 2500]);
    const { trace } = await readTraceFile(tracePath);
    const replayed = replay(trace, DEFAULT_GATE_SETTINGS);
    for (const w of report.windows) {
      expect(w.labelledFrames).toBe(500);
      let right = 0;
      for (let i = w.firstFrame; i < w.endFrame; i++) right += replayed.top1[i] === trace.labels![i] ? 1 : 0;
      expect(w.values[0]).toMatchObject({ metric: 'accuracy' });
      expect(w.values[0]!.value).toBeCloseTo(right / 500, 12);
      for (const v of w.values) {
        expect(v!.low, `${w.firstFrame} ${v!.metric}`).toBeLessThanOrEqual(v!.value);
        expect(v!.high, `${w.firstFrame} ${v!.metric}`).toBeGreaterThanOrEqual(v!.value);
      }
    }
    console.log(
      `[timeline] change points: ${report.changePoints.map((c) => `${c.frame} (${c.accuracyBefore.toFixed(3)} -> ${c.accuracyAfter.toFixed(3)}, p ${c.pValue.toFixed(3)})`).join(', ')}`,
    );
    expect(report.changePoints.length).toBeGreaterThan(0);
    expect(report.changePoints.some((c) => Math.abs(c.frame - 1000) <= 300 || Math.abs(c.frame - 2000) <= 300)).toBe(
      true,
    );
    for (const c of report.changePoints) expect(c.accuracyAfter).toBeLessThan(c.accuracyBefore + 0.2);
  });

  it('refuses a recording with no labels, and a window of one frame', async () => {
    const { trace } = await readTraceFile(tracePath);
    const unlabelled = join(dir, 'unlabelled.arrow');
    writeFileSync(unlabelled, encodeTraceFile({ ...trace, labels: null }, null));
    expect(knobFailureLine(await knob('timeline', unlabelled))).toMatch(/the trace has no labelled frames/);
    expect(knobFailureLine(await knob('timeline', tracePath, '--window-frames', '1'), 2)).toMatch(
      /--window-frames must be an integer from 2/,
    );
  });

  it("the run's report draws the same windows and names the same change points", async () => {
    const result = await knob('timeline', tracePath, '--json');
    const timeline = JSON.parse(result.stdout) as TimelineJson;
    // 3,000 frames at 30 fps: two windows of a minute (the second one 40 s)
    expect(timeline.windows.map((w) => w.firstFrame)).toEqual([0, 1800]);
    const html = readFileSync(join(dir, 'run', 'report.html'), 'utf8');
    expect(html).toContain('<h2>Calibration over time</h2>');
    const named = timeline.changePoints.map((c) => `frame ${c.frame} (`);
    for (const name of named) expect(html).toContain(name);
    if (named.length === 0) expect(html).toMatch(/Change points of accuracy \([^)]*\): none/);
    expect(existsSync(join(dir, 'run', 'figure-over-time.svg'))).toBe(true);
  });
});
