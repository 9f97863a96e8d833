import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GATE_SETTINGS,
  GATE_DISCRETIZATIONS,
  GATE_MODES,
  GATE_VARIANTS,
  type GateSettings,
} from '../../src-shared/gate';
import {
  GateReplayer,
  allocateReplayOutput,
  replay,
  validateTrace,
  type ReplayOutput,
  type Trace,
} from '../../src-shared/trace';
import { syntheticTrace } from '../support/synthetic-trace';

function expectBitIdentical(a: ReplayOutput, b: ReplayOutput): void {
  expect(Buffer.from(a.g.buffer).equals(Buffer.from(b.g.buffer))).toBe(true);
  expect(Buffer.from(a.v.buffer).equals(Buffer.from(b.v.buffer))).toBe(true);
  expect(Buffer.from(a.top1.buffer).equals(Buffer.from(b.top1.buffer))).toBe(true);
  expect(Buffer.from(a.confidence.buffer).equals(Buffer.from(b.confidence.buffer))).toBe(true);
  if (a.fusedLogits && b.fusedLogits)
    expect(Buffer.from(a.fusedLogits.buffer).equals(Buffer.from(b.fusedLogits.buffer))).toBe(true);
  expect(a.clampedInputs).toBe(b.clampedInputs);
}

/** Feeds a trace frame by frame, as a live stream does, growing the trace as frames arrive. */
function liveStep(
  trace: Trace,
  settings: GateSettings,
  retune?: { atFrame: number; settings: GateSettings },
): ReplayOutput {
  const out = allocateReplayOutput(trace.frameCount, trace.classCount, true);
  const replayer = new GateReplayer(settings, 0);
  for (let n = 0; n < trace.frameCount; n++) {
    if (retune && n === retune.atFrame) replayer.setSettings(retune.settings, 1);
    // the live trace only holds the frames received so far
    const received: Trace = {
      ...trace,
      frameCount: n + 1,
      timestampsSeconds: trace.timestampsSeconds.subarray(0, n + 1),
      uRef: trace.uRef.subarray(0, n + 1),
      zStatic: trace.zStatic.subarray(0, (n + 1) * trace.classCount),
      zDyn: trace.zDyn.subarray(0, (n + 1) * trace.classCount),
    };
    replayer.advance(received, n, n + 1, out);
  }
  return out;
}

describe('replay', () => {
  const trace = syntheticTrace({ frames: 3000, jitter: 0.3, seed: 5, uRef: (i) => 0.5 + 0.6 * Math.sin(i / 40) });

  for (const variant of GATE_VARIANTS) {
    for (const discretization of GATE_DISCRETIZATIONS) {
      for (const mode of GATE_MODES) {
        it(`live stepping equals batch replay bit for bit: ${variant}, ${discretization}, ${mode}`, () => {
          const settings: GateSettings = {
            ...DEFAULT_GATE_SETTINGS,
            variant,
            discretization,
            mode,
            zeta: 0.4,
            wnRadPerSec: 9,
          };
          expectBitIdentical(liveStep(trace, settings), replay(trace, settings, { keepFusedLogits: true }));
        });
      }
    }
  }

  it('live stepping equals batch replay bit for bit with regular timestamps (n / 30, intervals equal only to within rounding)', () => {
    const regular = syntheticTrace({ frames: 5000, seed: 6, uRef: (i) => 0.5 + 0.4 * Math.sin(i / 50) });
    for (const discretization of GATE_DISCRETIZATIONS) {
      const settings: GateSettings = { ...DEFAULT_GATE_SETTINGS, discretization };
      expectBitIdentical(liveStep(regular, settings), replay(regular, settings, { keepFusedLogits: true }));
    }
  });

  it('a retune between frames applies from the next frame and records the settings version', () => {
    const a: GateSettings = { ...DEFAULT_GATE_SETTINGS };
    const b: GateSettings = { ...DEFAULT_GATE_SETTINGS, zeta: 1.3, wnRadPerSec: 2 };
    const live = liveStep(trace, a, { atFrame: 1000, settings: b });
    const out = allocateReplayOutput(trace.frameCount, trace.classCount, true);
    const replayer = new GateReplayer(a, 0);
    replayer.advance(trace, 0, 1000, out);
    replayer.setSettings(b, 1);
    replayer.advance(trace, 1000, trace.frameCount, out);
    expectBitIdentical(live, out);
    expect(out.settingsVersion[999]).toBe(0);
    expect(out.settingsVersion[1000]).toBe(1);
  });

  it('replay is a pure function: same trace and settings, same bits', () => {
    expectBitIdentical(replay(trace, DEFAULT_GATE_SETTINGS), replay(trace, DEFAULT_GATE_SETTINGS));
  });

  it('validates the trace first and names the problem', () => {
    const bad = syntheticTrace({ frames: 10 });
    bad.timestampsSeconds[4] = bad.timestampsSeconds[3]!;
    expect(() => replay(bad, DEFAULT_GATE_SETTINGS)).toThrow(/frame 4 .* does not increase/);
    const nan = syntheticTrace({ frames: 10 });
    nan.zDyn[25] = Number.NaN;
    expect(() => validateTrace(nan)).toThrow(/z_dyn of frame 2 is not finite/);
    // infinities of both signs (which a sum could cancel into NaN) and the earlier frame named first
    const both = syntheticTrace({ frames: 10 });
    both.zStatic[61] = Number.POSITIVE_INFINITY;
    both.zStatic[62] = Number.NEGATIVE_INFINITY;
    both.zDyn[45] = Number.POSITIVE_INFINITY;
    expect(() => validateTrace(both)).toThrow(/z_dyn of frame 4 is not finite/);
    both.zDyn[45] = 0;
    expect(() => validateTrace(both)).toThrow(/z_static of frame 6 is not finite/);
    // the largest finite float32 values, however many, are finite
    const large = syntheticTrace({ frames: 10 });
    large.zStatic.fill(3.4028234663852886e38);
    large.zDyn.fill(-3.4028234663852886e38);
    expect(() => validateTrace(large)).not.toThrow();
    const labels = syntheticTrace({ frames: 10 });
    labels.labels![3] = 10;
    expect(() => validateTrace(labels)).toThrow(/label of frame 3/);
    const newer = { ...syntheticTrace({ frames: 2 }), formatVersion: 99 };
    expect(() => validateTrace(newer)).toThrow(/newer/);
  });

  it('an empty trace replays to empty outputs', () => {
    const out = replay(syntheticTrace({ frames: 0 }), DEFAULT_GATE_SETTINGS);
    expect(out.g.length).toBe(0);
  });
});
