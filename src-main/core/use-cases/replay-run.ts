import { checkCalibratorFor, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { analyseRun, type RunAnalysis } from '../engine/run-analysis';
import { writeRunOutputs, type PartialRun, type RunOutputFiles } from '../engine/run-outputs';
import type { StoredProvenance } from '../report/provenance';

export interface ReplayRunInput {
  /** Where trace.arrow, metrics.json and report.html go (checked by the caller before the work). */
  folder: string;
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  provenance: StoredProvenance;
  /** Why the trace covers fewer frames than its source, when it does. */
  partial?: PartialRun | null;
}

/**
 * A recording's run outputs at a setting (run-outputs.ts): the calibrator checked against the
 * recording's classes, then the gate replayed over the trace with every figure of the fused output
 * and of each branch, written as one group. `knob run` writes its fresh trace this way and
 * `knob replay` a recorded one at any setting; the desk's bundle export builds the same files. A
 * kept-class trace gets the same files, its metrics with their bounds against the full trace.
 */
export async function replayRun(input: ReplayRunInput): Promise<{ analysis: RunAnalysis; files: RunOutputFiles }> {
  const { trace, settings, calibrator } = input;
  if (calibrator !== null) checkCalibratorFor(calibrator, trace.classCount);
  const analysis = analyseRun(trace, settings, calibrator);
  const files = await writeRunOutputs(input.folder, trace, settings, analysis, input.provenance, input.partial ?? null);
  return { analysis, files };
}
