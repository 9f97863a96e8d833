import type { PaperAnalyses } from '../../../src-shared/analysis';
import { checkCalibratorFor, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { analyseOnThread } from '../analysis/analysis-thread';

export interface AnalyseTraceInput {
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  permutations: number;
  seed?: number;
  signal?: AbortSignal;
}

/**
 * The paper's analyses of a recording (T_eff, CSR, agreement, oracle advantage, polarisation) at
 * the given settings and output calibrator, on a thread of their own and cancellable: the desk's
 * analysis.run and `knob analyze` alike. The calibrator is checked against the recording's classes
 * before the thread starts.
 */
export function analyseTrace(input: AnalyseTraceInput): Promise<PaperAnalyses> {
  const { trace, settings, calibrator, permutations, seed, signal } = input;
  if (calibrator !== null) checkCalibratorFor(calibrator, trace.classCount);
  return analyseOnThread(
    { trace, settings, calibrator, permutations, ...(seed === undefined ? {} : { seed }) },
    signal,
  );
}
