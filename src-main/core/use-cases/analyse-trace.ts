import type { PaperAnalyses } from '../../../src-shared/analysis';
import { checkCalibratorFor, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import type { Trace } from '../../../src-shared/trace/trace';
import { analyseOnThread } from '../analysis/analysis-thread';

export interface AnalyseTraceInput {
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  permutations: number;
  seed?: number;
  signal?: AbortSignal;
  /** Each step of the analyses as it starts (stage, done, total). */
  onProgress?: (stage: string, done: number, total: number) => void;
}

/**
 * The paper's analyses of a recording (T_eff, CSR, agreement, oracle advantage, polarisation) at
 * the given settings and output calibrator, on a thread of their own and cancellable: the desk's
 * analysis.run and `knob analyze` alike. The calibrator is checked against the recording's classes,
 * and a kept-class trace refused (the analyses read every class), before the thread starts.
 */
export function analyseTrace(input: AnalyseTraceInput): Promise<PaperAnalyses> {
  const { trace, settings, calibrator, permutations, seed, signal, onProgress } = input;
  requireEveryClass(trace, "the paper's analyses");
  if (calibrator !== null) checkCalibratorFor(calibrator, trace.classCount);
  return analyseOnThread(
    { trace, settings, calibrator, permutations, ...(seed === undefined ? {} : { seed }) },
    signal,
    onProgress,
  );
}
