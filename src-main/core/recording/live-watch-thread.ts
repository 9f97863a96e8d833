import type { FeatureMmdReference } from '../../../src-shared/drift/feature-mmd';
import type {
  DriftAlarm,
  FeatureReference,
  FrameRows,
  FrameSignal,
  MonitorPlan,
  ThresholdCalibration,
} from '../../../src-shared/drift';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/**
 * What a live drift watch (recording/live-drift-watch.ts) asks of its thread (live-watch-worker.ts):
 * arm the detectors once, then step each batch of recorded frames, in the order sent.
 */
export type LiveWatchRequest =
  | {
      kind: 'arm';
      plan: MonitorPlan;
      calibrations: ReadonlyArray<readonly ThresholdCalibration[]>;
      signals: FrameSignal[];
      /** The reference's feature statistics and the MMD kernel's reference (its frames copied), when watched. */
      references: { features: FeatureReference | null; mmd: FeatureMmdReference | null };
      classCount: number;
    }
  | {
      kind: 'frames';
      /** The batch is frames [firstFrame, firstFrame + g.length). */
      firstFrame: number;
      /** The frame at row 0 of `rows`: the one before the first (a feature-MMD term reads it), or 0. */
      rowFrame: number;
      /** The columns the watched signals read, from rowFrame on (a column no signal reads is empty). */
      rows: FrameRows;
      /** The gate at each frame of the batch, as the recording's replay gave it (unclamped). */
      g: Float64Array;
    };

/** The pairs as the watch armed them: what the trace file keeps of each. */
export interface ArmedPairSummary {
  signal: string;
  detector: string;
  identity: string;
  threshold: number | null;
  skipped: string | null;
}

/** A batch's columns by name: the buffers a batch's rows travel in, handed back with its answer for the next. */
export type BatchBuffers = Record<'zStatic' | 'zDyn' | 'uRef' | 'features' | 'g', ArrayBuffer | null>;

export type LiveWatchResult = { pairs: ArmedPairSummary[] } | { alarms: DriftAlarm[]; buffers: BatchBuffers };

/** The buffers of a batch's answer, which move back to the watch (serve's transferOf). */
export function batchBuffersOf(result: unknown): ArrayBuffer[] {
  const buffers = (result as { buffers?: BatchBuffers }).buffers;
  return buffers === undefined ? [] : Object.values(buffers).filter((b): b is ArrayBuffer => b !== null);
}

/**
 * A live watch's thread (live-watch-worker.ts, an entry beside this module), unreferenced.
 */
export function startLiveWatchThread(): ThreadChannel<LiveWatchRequest, LiveWatchResult> {
  const worker = startEntryWorker(import.meta.url, 'live-watch-worker');
  // a watch left on a recording nobody closes must not keep the process alive
  worker.unref();
  return new ThreadChannel(worker, 'the drift watch thread');
}
