import {
  FEATURE_SIGNALS,
  featureSignalReferences,
  type DriftAlarm,
  type FrameSignal,
  type MonitorPlan,
  type ThresholdCalibration,
} from '../../../src-shared/drift';
import { KnobError } from '../../../src-shared/errors';
import { sameGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import {
  startLiveWatchThread,
  type ArmedPairSummary,
  type BatchBuffers,
  type LiveWatchRequest,
  type LiveWatchResult,
} from './live-watch-thread';
import type { ThreadChannel } from '../workers/worker-channel';

/** What a watch was armed with, as the trace file keeps it (its context's `driftWatch`). */
export interface DriftWatchTerms {
  /** The monitor's reference window and its mean time between false alarms (hours of stream time). */
  reference: { start: number; end: number };
  falseAlarmHours: number;
  signals: FrameSignal[];
  /** The knobs' version and gate settings the thresholds were calibrated at. */
  settingsVersion: number;
  gate: GateSettings;
}

/** Alarms a watch keeps in the recording (and its trace file); past it, it counts them. */
export const KEPT_LIVE_ALARMS = 100_000;
/** Frames sent to the thread at once, at most. */
export const WATCH_BATCH_FRAMES = 64;
/**
 * How long a frame waits for others before its batch goes anyway: an alarm reaches the stream at
 * most this much (and one batch's stepping) after its frame. A quarter second of a drift that
 * builds over seconds to minutes; a batch each frame would cost the event loop a message and its
 * answer a frame, more than stepping the detectors in line (npm run bench -- drift).
 */
export const WATCH_BATCH_MS = 250;

/** The signals that read the branches' logits (the features' are FEATURE_SIGNALS, which read the frame before too). */
const LOGIT_SIGNALS: readonly FrameSignal[] = ['confidence', 'disagreement'];
const EMPTY = new Float32Array(0);

/**
 * A drift monitor watching a live recording: the detectors a `field.monitor` calibrated, armed at
 * the frame the operator asked and stepped over the frames as they are recorded, on a thread of its
 * own (live-watch-worker.ts: the same frameSignalsAt and DriftWatch as the offline monitor, so the
 * same alarms). The event loop only copies each batch's rows (at most WATCH_BATCH_FRAMES frames or
 * WATCH_BATCH_MS old) and sends them; the alarms come back a batch later, stay with the recording,
 * and go out with the stream's next update (`onAlarms`). `settled()` waits for every frame recorded
 * so far: what the answer to stopping the watch and a saved trace count.
 */
export class LiveDriftWatch {
  readonly alarms: DriftAlarm[] = [];
  alarmCount = 0;
  /** Frames before this one have been stepped on the thread. */
  steppedThrough: number;
  /** Why it stopped watching (null while it watches); its alarms stay. */
  stoppedBecause: string | null = null;
  private pending: DriftAlarm[] = [];
  private pairs: ArmedPairSummary[] = [];
  private readonly thread: ThreadChannel<LiveWatchRequest, LiveWatchResult>;
  /** The last request sent, settled (a failure stops the watch and says why). */
  private last: Promise<void>;
  private readonly readsLogits: boolean;
  private readonly readsGateTarget: boolean;
  private readonly readsFeatures: boolean;
  /** A batch failed on the thread: later answers come from detectors stopped mid-batch, and are dropped. */
  private failed = false;

  /** The batch not yet sent: frames [batchFirst, batchFirst + batchCount) of `batchTrace`, their gate. */
  private batchTrace: Trace | null = null;
  private batchFirst = 0;
  private batchCount = 0;
  private readonly batchG = new Float64Array(WATCH_BATCH_FRAMES);
  private batchTimer: ReturnType<typeof setTimeout> | null = null;
  /**
   * Buffers a batch's rows travel in, each column's all of one size (a full batch and the frame
   * before it), back from the thread with the batch's answer: the event loop writes each batch
   * into pages already touched, not fresh ones (a first touch costs more than the copy here).
   */
  private readonly spare: { [C in keyof BatchBuffers]: ArrayBuffer[] } = {
    zStatic: [],
    zDyn: [],
    uRef: [],
    features: [],
    g: [],
  };

  /** The gate settings last seen, and whether they are those the watch was armed at. */
  private lastSettings: GateSettings | null = null;
  private sameKnobs = true;

  constructor(
    plan: MonitorPlan,
    calibrations: ReadonlyArray<readonly ThresholdCalibration[]>,
    readonly terms: DriftWatchTerms,
    /** The first frame it watches. */
    readonly fromFrame: number,
    /** The recording (its reference frames give the feature signals their statistics). */
    trace: Trace,
    /** The watch this one replaced on the recording: its alarms stay, and go out with this one's. */
    private readonly earlier: LiveDriftWatch | null = null,
    /** Called when alarms come back from the thread (the live stream sends an update). */
    private readonly onAlarms: () => void = () => {},
  ) {
    const signals = terms.signals;
    this.steppedThrough = fromFrame;
    this.readsLogits = signals.some((s) => LOGIT_SIGNALS.includes(s));
    this.readsGateTarget = signals.includes('gate-target');
    this.readsFeatures = signals.some((s) => FEATURE_SIGNALS.includes(s));
    const { features, mmd } = featureSignalReferences(trace, signals, terms.reference);
    this.thread = startLiveWatchThread();
    // the kernel's reference frames are a view of the recording: the thread gets a copy of them alone
    const references = { features, mmd: mmd === null ? null : { ...mmd, values: mmd.values.slice() } };
    this.last = this.send({ kind: 'arm', plan, calibrations, signals, references, classCount: trace.classCount });
  }

  /**
   * Frame i was just recorded, the gate at it `g`, under the gate `settings`. A frame at other gate
   * settings stops the watch: its thresholds hold for the signals at the knobs they were calibrated
   * at (an output calibrator does not matter: the signals are the fused output's).
   */
  step(trace: Trace, i: number, g: number, settings: GateSettings): void {
    if (this.stoppedBecause !== null) return;
    if (settings !== this.lastSettings) {
      this.lastSettings = settings;
      this.sameKnobs = sameGateSettings(settings, this.terms.gate);
    }
    if (!this.sameKnobs) {
      this.stop(`the knobs moved (frame ${i})`);
      return;
    }
    if (this.batchCount > 0 && (this.batchTrace !== trace || i !== this.batchFirst + this.batchCount)) this.sendBatch();
    if (this.batchCount === 0) {
      this.batchTrace = trace;
      this.batchFirst = i;
      this.batchTimer ??= setTimeout(() => this.sendBatch(), WATCH_BATCH_MS);
    }
    this.batchG[this.batchCount++] = g;
    if (this.batchCount === WATCH_BATCH_FRAMES) this.sendBatch();
  }

  /**
   * Stops watching: the frames recorded until now are still stepped, then the thread ends and the
   * buffers go (a stopped watch stays on the recording for its alarms).
   */
  stop(reason: string): void {
    if (this.stoppedBecause !== null) return;
    this.stoppedBecause = reason;
    this.sendBatch();
    void this.last
      .then(() => {
        for (const buffers of Object.values(this.spare)) buffers.length = 0;
        return this.thread.close();
      })
      .catch(() => {
        // a thread that cannot be terminated is gone already
      });
  }

  /** Whether its thread has ended (a stopped watch's, once its last batch is answered). */
  get threadEnded(): boolean {
    return this.thread.endedWith !== null;
  }

  /**
   * Resolves once every frame recorded so far has been stepped and its alarms are here. Called in
   * the same turn as what reads the recording (no await between), it covers exactly those frames.
   */
  async settled(): Promise<void> {
    this.sendBatch();
    await Promise.all([this.earlier?.settled(), this.last]);
  }

  /** The alarms come back (with every earlier watch's) since the last call: what the next stream update carries. */
  takeNew(): DriftAlarm[] {
    const taken = this.pending;
    this.pending = [];
    const earlier = this.earlier?.takeNew() ?? [];
    return earlier.length === 0 ? taken : [...earlier, ...taken];
  }

  /** How it stands, as the stream's updates and field.watchLive say (alarms of frames stepped so far). */
  state(): { watching: boolean; fromFrame: number; alarmCount: number; stoppedBecause: string | null } {
    return {
      watching: this.stoppedBecause === null,
      fromFrame: this.fromFrame,
      alarmCount: this.alarmCount,
      stoppedBecause: this.stoppedBecause,
    };
  }

  /**
   * The watch as a trace file of the recording's first `frameCount` frames keeps it: their alarms
   * (after `settled()`, of every one of them).
   */
  record(frameCount: number): Record<string, unknown> {
    const alarms = this.alarms.filter((a) => a.frame < frameCount);
    return {
      ...this.terms,
      fromFrame: this.fromFrame,
      steppedThrough: Math.min(this.steppedThrough, frameCount),
      stoppedBecause: this.stoppedBecause,
      pairs: this.pairs,
      alarmCount: this.alarmCount - (this.alarms.length - alarms.length),
      alarms: alarms.map((a) => ({ ...a })),
      /** The watches armed on the recording before this one, each with its alarms. */
      earlier: this.earlier?.record(frameCount) ?? null,
    };
  }

  /** Sends the batch not yet sent: its rows copied (from the frame before its first), its gate. */
  private sendBatch(): void {
    if (this.batchTimer !== null) clearTimeout(this.batchTimer);
    this.batchTimer = null;
    const trace = this.batchTrace;
    const count = this.batchCount;
    if (trace === null || count === 0) return;
    this.batchCount = 0;
    this.batchTrace = null;
    const firstFrame = this.batchFirst;
    const end = firstFrame + count;
    const rowFrame = Math.max(0, firstFrame - 1);
    const k = trace.classCount;
    const features = trace.features;
    const rows = {
      classCount: k,
      zStatic: this.readsLogits ? this.rowsOf('zStatic', trace.zStatic, k, rowFrame, end) : EMPTY,
      zDyn: this.readsLogits ? this.rowsOf('zDyn', trace.zDyn, k, rowFrame, end) : EMPTY,
      uRef: this.readsGateTarget ? this.rowsOf('uRef', trace.uRef, 1, rowFrame, end) : EMPTY,
      ...(this.readsFeatures && features !== undefined
        ? {
            features: {
              width: features.width,
              values: this.rowsOf('features', features.values, features.width, rowFrame, end),
            },
          }
        : {}),
    };
    const g = new Float64Array(this.spare.g.pop() ?? new ArrayBuffer(WATCH_BATCH_FRAMES * 8), 0, count);
    g.set(this.batchG.subarray(0, count));
    const transfer = [rows.zStatic, rows.zDyn, rows.uRef, rows.features?.values, g]
      .filter((a) => a !== undefined && a.length > 0)
      .map((a) => a!.buffer as ArrayBuffer);
    const sent = this.send({ kind: 'frames', firstFrame, rowFrame, rows, g }, transfer, end);
    this.last = this.last.then(() => sent);
  }

  /** Rows [from, to) of a column of `width` values a row, copied into a spare buffer of that column. */
  private rowsOf(
    column: 'zStatic' | 'zDyn' | 'uRef' | 'features',
    source: Float32Array,
    width: number,
    from: number,
    to: number,
  ): Float32Array {
    const buffer = this.spare[column].pop() ?? new ArrayBuffer((WATCH_BATCH_FRAMES + 1) * width * 4);
    const rows = new Float32Array(buffer, 0, (to - from) * width);
    rows.set(source.subarray(from * width, to * width));
    return rows;
  }

  /** One request to the thread; its answer lands here in the order sent (the thread answers in order). */
  private send(request: LiveWatchRequest, transfer: ArrayBuffer[] = [], steppedThrough?: number): Promise<void> {
    return this.thread.call(request, { transfer }).then(
      (result) => {
        if ('pairs' in result) this.pairs = result.pairs;
        else {
          for (const [column, buffer] of Object.entries(result.buffers) as Array<
            [keyof BatchBuffers, ArrayBuffer | null]
          >)
            if (buffer !== null) this.spare[column].push(buffer);
          this.received(result.alarms, steppedThrough!);
        }
      },
      (error: unknown) => {
        const message = error instanceof KnobError ? error.message : String(error);
        this.failed = true;
        this.stop(`the watch's thread failed: ${message}`);
      },
    );
  }

  private received(alarms: DriftAlarm[], steppedThrough: number): void {
    if (this.failed) return;
    this.steppedThrough = steppedThrough;
    if (alarms.length === 0) return;
    for (const alarm of alarms) {
      this.alarmCount++;
      if (this.alarms.length >= KEPT_LIVE_ALARMS) continue;
      this.alarms.push(alarm);
      this.pending.push(alarm);
    }
    this.onAlarms();
  }
}
