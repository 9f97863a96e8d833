import { paperAnalyses, type PaperAnalyses } from '../../../src-shared/analysis';
import { compileCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { serve } from '../workers/worker-serve';

/**
 * The paper's analyses of a recording off the caller's event loop (analysis-thread.ts): about
 * 0.2 s per 10,000 frames, which would otherwise hold up a playing stream. Answers its one request
 * (worker-protocol.ts) with the analyses whole; the desk and `knob analyze` word them (src-shared/analysis).
 */
export interface AnalysisRequest {
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  permutations: number;
  seed?: number;
}

function answer(
  { trace, settings, calibrator, permutations, seed }: AnalysisRequest,
  onStep: (stage: string, done: number, total: number) => void,
): PaperAnalyses {
  return paperAnalyses(trace, settings, {
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
    permutations,
    ...(seed === undefined ? {} : { seed }),
    onStep,
  });
}

// each step reported to the caller as it starts (the work bar's fraction and time left)
serve<AnalysisRequest, PaperAnalyses>((request, context) =>
  answer(request, (stage, done, total) => context.progress(done, total, stage)),
);
