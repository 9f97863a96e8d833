import type {
  CalibrationTimelineInput,
  CalibrationTimelineResult,
} from '../../../src-shared/drift/calibration-timeline';
import { callOnFreshThread } from '../workers/fresh-thread';
import type { EstimateAccuracyInput, EstimateAccuracyResult } from './estimate-accuracy';
import type { QueueReviewInput, QueueReviewResult } from './queue-review';

export type FieldRequest =
  | { kind: 'timeline'; input: CalibrationTimelineInput }
  | { kind: 'estimate'; input: EstimateAccuracyInput }
  | { kind: 'review'; input: QueueReviewInput };
export type FieldResult = CalibrationTimelineResult | EstimateAccuracyResult | QueueReviewResult;

/**
 * One of the Field tab's views on a thread of its own (field-worker.ts, callOnFreshThread):
 * cancellable, and the recording is copied to the thread.
 */
function onFieldThread(request: FieldRequest, signal?: AbortSignal): Promise<FieldResult> {
  return callOnFreshThread(import.meta.url, 'field-worker', 'the Field tab thread', request, signal);
}

export const timelineOnThread = (input: CalibrationTimelineInput, signal?: AbortSignal) =>
  onFieldThread({ kind: 'timeline', input }, signal) as Promise<CalibrationTimelineResult>;
export const estimateOnThread = (input: EstimateAccuracyInput, signal?: AbortSignal) =>
  onFieldThread({ kind: 'estimate', input }, signal) as Promise<EstimateAccuracyResult>;
export const reviewOnThread = (input: QueueReviewInput, signal?: AbortSignal) =>
  onFieldThread({ kind: 'review', input }, signal) as Promise<QueueReviewResult>;
