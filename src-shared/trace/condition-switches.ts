import { z } from 'zod';
import type { Calibrator } from '../calibrators/output-calibrator';
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
 * The conditions a condition-aware calibrator (conditional-calibration.ts) applies over the first
 * `frameCount` frames of a recording, as the frames where the detected condition changes: the
 * first `MAX_CONDITION_SWITCHES` of them, with how many there are in all and the last frame's. Each frame's condition
 * is the calibrator's `conditionOf` on its recorded features, as the live view and `trace.frame`
 * show it, so the chart's segments and the frame on screen agree. Null for any other calibrator,
 * or a trace without features.
 */
export function conditionSwitches(
  trace: Trace,
  frameCount: number,
  calibrator: Pick<Calibrator, 'conditionOf'> | null,
): ConditionSwitches | null {
  const features = trace.features;
  if (calibrator?.conditionOf === undefined || features === undefined) return null;
  const switches: ConditionSwitch[] = [];
  let switchCount = 0;
  let previous: string | null = null;
  for (let frame = 0; frame < frameCount; frame++) {
    const condition = calibrator.conditionOf(features.values, frame * features.width);
    if (condition === previous) continue;
    previous = condition;
    switchCount++;
    if (switches.length < MAX_CONDITION_SWITCHES)
      switches.push({ frame, tSeconds: trace.timestampsSeconds[frame]!, condition });
  }
  return { switches, switchCount, lastCondition: previous };
}
