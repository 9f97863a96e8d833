import { z } from 'zod';
import {
  appliedCondition,
  createConditionHysteresis,
  type ConditionHysteresisState,
} from '../calibrators/condition-hysteresis';
import type { Calibrator } from '../calibrators/output-calibrator';
import type { GateMode } from '../gate/gate-settings';
import type { Trace } from './trace';

/** The most switches listed: a detector flickering frame by frame is still drawn in bounded memory. */
export const MAX_CONDITION_SWITCHES = 500;

/**
 * The switches of a recording: the frames where the applied condition-aware calibrator's detected
 * condition changes (the first frame is one), the first MAX_CONDITION_SWITCHES of them, how many
 * in all, and the condition at the last frame ('recording.series' carries it).
 */
export const ConditionSwitchesSchema = z.strictObject({
  switches: z
    .array(
      z.strictObject({
        frame: z.number().int().nonnegative(),
        tSeconds: z.number(),
        condition: z.string(),
      }),
    )
    .max(MAX_CONDITION_SWITCHES),
  switchCount: z.number().int().nonnegative(),
  lastCondition: z.string().nullable(),
});
export type ConditionSwitches = z.output<typeof ConditionSwitchesSchema>;
export type ConditionSwitch = ConditionSwitches['switches'][number];

/**
 * The condition a condition-aware calibrator (conditional-calibration.ts) applies to each of the
 * first `frameCount` frames of a recording (an index into its `condition.names`): in continuous
 * mode the recording is one stream, its detected conditions through the hysteresis from the first
 * frame (condition-hysteresis.ts), as the replay applies them; in reset mode each frame's own. Null
 * for any other calibrator, or a trace without features. `state`: the stream's hysteresis, at its
 * start; a caller that goes on appending frames passes its own and keeps it.
 */
export function appliedConditions(
  trace: Pick<Trace, 'features'>,
  frameCount: number,
  calibrator: Pick<Calibrator, 'condition'> | null,
  mode: GateMode,
  state: ConditionHysteresisState = createConditionHysteresis(),
): Int32Array | null {
  const features = trace.features;
  const choice = calibrator?.condition;
  if (choice === undefined || features === undefined) return null;
  const stream = mode === 'continuous' ? state : null;
  const applied = new Int32Array(frameCount);
  for (let frame = 0; frame < frameCount; frame++)
    applied[frame] = appliedCondition(choice, stream, features.values, frame * features.width);
  return applied;
}

/**
 * The conditions a condition-aware calibrator applies over the first `frameCount` frames of a
 * recording (appliedConditions), as the frames where the applied condition changes: the first
 * `MAX_CONDITION_SWITCHES` of them, with how many there are in all and the last frame's, as the
 * live view and `trace.frame` show them, so the chart's segments and the frame on screen agree.
 * Null for any other calibrator, or a trace without features.
 */
export function conditionSwitches(
  trace: Pick<Trace, 'features' | 'timestampsSeconds'>,
  frameCount: number,
  calibrator: Pick<Calibrator, 'condition'> | null,
  mode: GateMode,
): ConditionSwitches | null {
  const applied = appliedConditions(trace, frameCount, calibrator, mode);
  return applied === null ? null : switchesAlong(applied, calibrator!.condition!.names, trace.timestampsSeconds);
}

/** The switches of a recording's applied conditions (appliedConditions), named by `names`. */
export function switchesAlong(
  applied: Int32Array,
  names: readonly string[],
  timestampsSeconds: Float64Array,
): ConditionSwitches {
  const frameCount = applied.length;
  const switches: ConditionSwitch[] = [];
  let switchCount = 0;
  let previous = -1;
  for (let frame = 0; frame < frameCount; frame++) {
    if (applied[frame] === previous) continue;
    previous = applied[frame]!;
    switchCount++;
    if (switches.length < MAX_CONDITION_SWITCHES)
      switches.push({ frame, tSeconds: timestampsSeconds[frame]!, condition: names[previous]! });
  }
  return { switches, switchCount, lastCondition: previous < 0 ? null : names[previous]! };
}
