import { parentPort } from 'node:worker_threads';
import { paperAnalyses, type PaperAnalyses } from '../../../src-shared/analysis';
import { compileCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { toErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';

/**
 * The paper's analyses of a recording off the caller's event loop (analysis-thread.ts): about
 * 0.2 s per 10,000 frames, which would otherwise hold up a playing stream. Answers its one request
 * with the analyses whole; the desk and `knob analyze` word them (src-shared/analysis).
 */
export interface AnalysisRequest {
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  permutations: number;
  seed?: number;
}

function answer({ trace, settings, calibrator, permutations, seed }: AnalysisRequest): PaperAnalyses {
  return paperAnalyses(trace, settings, {
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
    permutations,
    ...(seed === undefined ? {} : { seed }),
  });
}

parentPort?.on('message', (request: AnalysisRequest) => {
  try {
    parentPort?.postMessage({ ok: true, value: answer(request) });
  } catch (error) {
    parentPort?.postMessage({ ok: false, error: toErrorPayload(error) });
  }
});
