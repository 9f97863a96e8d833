import { describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import type { Trace } from '../../../src-shared/trace/trace';
import type { TuningRequest } from '../../../src-shared/tuning';
import { tuneOnThreads } from '../tuning/tuning-pool';

export interface TuneKnobsInput {
  trace: Trace;
  request: TuningRequest;
  /** The setting the search starts from and is compared with. */
  gate: GateSettings;
  calibrator: CalibratorSpec | null;
  threads?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, stage: string) => void;
}

/**
 * Tunes the knobs on a recording by replay on the tuning threads (tuning-pool.ts), for the desk
 * (tune.run) and `knob tune` alike. The tuner varies the gate and a temperature: a setting with
 * any other output calibrator is refused before a thread starts, in one set of words for both.
 */
export async function tuneKnobs(input: TuneKnobsInput): Promise<Awaited<ReturnType<typeof tuneOnThreads>>> {
  const { calibrator } = input;
  requireEveryClass(input.trace, 'tuning');
  if (calibrator !== null && calibrator.method !== 'temperature')
    throw new KnobError(
      'INVALID_SETTINGS',
      `the tuner varies the gate and a temperature only; the output calibrator is ${describeCalibrator(calibrator)}: switch it off (or to temperature scaling) first`,
    );
  const temperature = calibrator?.method === 'temperature' ? calibrator.temperature : 1;
  return tuneOnThreads(
    input.trace,
    input.request,
    { settings: input.gate, temperature },
    { threads: input.threads, signal: input.signal, onProgress: input.onProgress },
  );
}
