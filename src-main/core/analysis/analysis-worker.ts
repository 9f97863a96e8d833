import { parentPort } from 'node:worker_threads';
import { analysisSummaryLines, exceptionTable, paperAnalyses, severityTable } from '../../../src-shared/analysis';
import { compileCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { toErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';

/**
 * The paper's analyses of a recording off the backend's event loop (analysis-thread.ts): about
 * 0.2 s per 10,000 frames, which would otherwise hold up a playing stream. Answers its one request
 * with the lines and tables the desk shows (analysis-text.ts).
 */
export interface AnalysisRequest {
  trace: Trace;
  settings: GateSettings;
  calibrator: CalibratorSpec | null;
  permutations: number;
}

function answer({ trace, settings, calibrator, permutations }: AnalysisRequest) {
  const analyses = paperAnalyses(trace, settings, {
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
    permutations,
  });
  return {
    frames: analyses.frames,
    labelledFrames: analyses.labelledFrames,
    lines: analysisSummaryLines(analyses),
    bySeverity: severityTable(analyses),
    exceptions: exceptionTable(analyses),
    exceptionCount: analyses.teff.exceptionCount,
  };
}

export type AnalysisAnswer = ReturnType<typeof answer>;

parentPort?.on('message', (request: AnalysisRequest) => {
  try {
    parentPort?.postMessage({ ok: true, value: answer(request) });
  } catch (error) {
    parentPort?.postMessage({ ok: false, error: toErrorPayload(error) });
  }
});
