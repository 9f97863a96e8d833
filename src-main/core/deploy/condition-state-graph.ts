import type { AnyCalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import type { GateMode } from '../../../src-shared/gate/gate-settings';
import type { GraphBuilder } from './graph-builder';

/**
 * The condition-aware calibrator's hysteresis in the step graph (src-shared/calibrators/
 * condition-hysteresis.ts): the stream's applied condition and how many frames in a row were
 * detected as another, carried by the caller like the gate's state (float64 [N, 1], small whole
 * numbers, exact). A stream starts at condition = -1 (none yet), run = 0. Carried only where the app carries it: a continuous stream, and a hysteresis of more than
 * one frame (one frame is the detector alone, which needs no state).
 */
export const CONDITION_STATE = [
  { input: 'condition', output: 'condition_next', initial: -1 },
  { input: 'condition_run', output: 'condition_run_next', initial: 0 },
] as const;

/** Whether a step graph of this calibrator in this mode carries CONDITION_STATE. */
export function carriesConditionState(calibrator: AnyCalibratorSpec | null, mode: GateMode): boolean {
  return mode === 'continuous' && calibrator?.method === 'conditional' && (calibrator.hysteresisFrames ?? 1) > 1;
}

const TO_DOUBLE = 11; // TensorProto.DataType.DOUBLE
const TO_INT64 = 7; // TensorProto.DataType.INT64

/**
 * The condition applied to each stream's frame (int64 [N, 1]) from the one detected on it (int64
 * [N, 1]), writing the next state: nextAppliedCondition's rule,
 *   keep = applied < 0 or detected = applied;   run' = 0 if keep, else run + 1
 *   switch = keep or run' >= H;   applied' = detected if switch else applied;   run'' = 0 if switch else run'.
 */
export function appliedConditionNodes(b: GraphBuilder, detected: string, hysteresisFrames: number): string {
  const [applied, run] = CONDITION_STATE.map((s) => s.input);
  const c = (value: number) => b.scalar('double', value);
  const d = b.op('Cast', [detected], { to: TO_DOUBLE });
  const keep = b.op('Or', [b.op('Less', [applied!, c(0)]), b.op('Equal', [d, applied!])]);
  const runAfter = b.op('Where', [keep, c(0), b.op('Add', [run!, c(1)])]);
  const switches = b.op('Or', [keep, b.op('Not', [b.op('Less', [runAfter, c(hysteresisFrames)])])]);
  const appliedNext = b.op('Where', [switches, d, applied!]);
  b.op('Identity', [appliedNext], {}, CONDITION_STATE[0].output);
  b.op('Where', [switches, c(0), runAfter], {}, CONDITION_STATE[1].output);
  return b.op('Cast', [appliedNext], { to: TO_INT64 });
}
