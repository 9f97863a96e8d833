import { calibrateThresholds, type ThresholdRequest } from '../../../src-shared/drift/monitor';
import type { ThresholdCalibration } from '../../../src-shared/drift/false-alarm-threshold';
import { serve } from '../workers/worker-serve';

/**
 * Drift-alarm thresholds off the caller's thread (threshold-threads.ts): each is a simulation of
 * tens of millions of frames, about a second, and a monitor has one per signal.
 */
serve<ThresholdRequest[], ThresholdCalibration[][]>((requests) => requests.map(calibrateThresholds));
