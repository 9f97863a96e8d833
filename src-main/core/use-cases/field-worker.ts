import { calibrationTimeline } from '../../../src-shared/drift/calibration-timeline';
import { serve } from '../workers/worker-serve';
import { estimateAccuracyOfTrace } from './estimate-accuracy';
import type { FieldRequest, FieldResult } from './field-thread';
import { queueReview } from './queue-review';

/**
 * The Field tab's views of a recording off the backend's event loop (field-thread.ts): calibration
 * over time, the label-free estimates and the review queue bootstrap or simulate over every frame
 * (seconds on an hour), which would otherwise hold up a playing stream. Answers its one request.
 */
function answer(request: FieldRequest): FieldResult {
  switch (request.kind) {
    case 'timeline':
      return calibrationTimeline(request.input);
    case 'estimate':
      return estimateAccuracyOfTrace(request.input);
    case 'review':
      return queueReview(request.input);
  }
}

serve<FieldRequest, FieldResult>(answer);
