/**
 * A recording saves its label layers as they are now (Recording.frozen): a correction the operator
 * took away after loading a trace that had it does not come back when the trace is saved again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Recording } from '../../src-main/core/recording/recording';
import { readTraceFile, writeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { unknownProvenance } from '../../src-main/core/report/provenance';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { replay } from '../../src-shared/trace/replay';
import { syntheticTrace } from '../support/synthetic-trace';

describe('saved label layers', () => {
  it('are those of now, not those the trace was loaded with', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-layers-'));
    const trace = syntheticTrace({ frames: 20, classCount: 4, seed: 2 });
    const options = {
      origin: 'loaded' as const,
      description: 'a trace',
      provenance: unknownProvenance('test', 'test'),
    };
    const first = Recording.complete({ ...options, id: 1 }, trace, replay(trace, DEFAULT_GATE_SETTINGS));
    const truth = trace.labels![3]!;
    first.correctLabel(3, (truth + 1) % 4);
    const save = async (recording: Recording, name: string) => {
      const { trace: frozen, output } = recording.frozen();
      await writeTraceFile(join(dir, name), frozen, { settings: DEFAULT_GATE_SETTINGS, output });
      return readTraceFile(join(dir, name));
    };
    const corrected = await save(first, 'corrected.arrow');
    expect(corrected.trace.labels![3]).toBe((truth + 1) % 4);
    const second = Recording.complete({ ...options, id: 2 }, corrected.trace, corrected.run!.output);
    second.correctLabel(3, -1);
    const cleared = await save(second, 'cleared.arrow');
    expect(cleared.trace.labels![3]).toBe(truth);
    expect(cleared.trace.labelLayers?.operator[3] ?? -1).toBe(-1);
  });
});
