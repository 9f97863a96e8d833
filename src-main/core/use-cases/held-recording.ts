import { stopIfCancelled, type CancelSignal } from '../../../src-shared/cancel-signal';
import { FusedScoreTable, type FusedScoreTableParts } from '../../../src-shared/fusion/fused-score-table';
import { logitsShared } from '../metrics/shared-fused-rows';
import type { TableRowsRequest } from '../metrics/table-rows';
import type { MetadataColumn, Trace } from '../../../src-shared/trace/trace';

/**
 * The current recording as the metrics worker holds it between requests (issue 29): a knob turn on
 * a long recording sends the worker nothing but the settings, where it used to copy the whole trace
 * (864 MB for an hour at 1,000 classes) for every view. The backend's client sends the recording
 * whole once, then only the rows added since and the label column (labels change anywhere);
 * frames once recorded never change otherwise. The worker also keeps the recording's fused-score
 * tables (fused-score-table.ts), extended as rows arrive.
 */
export type RecordingRows =
  | { recordingId: number; kind: 'whole'; trace: Trace }
  | {
      recordingId: number;
      kind: 'append';
      /** The frame the rows start at (what the worker holds). */
      from: number;
      /** Frames [from, from + rows.frameCount) of the recording, as a trace (its labels unread). */
      rows: Trace;
      /** The effective label of every frame of the recording now. */
      labels: Int32Array | null;
    };

/** A typed array of `length` with room to grow, keeping `array`'s first `used` values. */
function grown<T extends Float32Array | Float64Array | Int32Array>(array: T, used: number, length: number): T {
  if (length <= array.length) return array;
  const bigger = new (array.constructor as new (n: number) => T)(Math.max(length, 2 * array.length));
  bigger.set(array.subarray(0, used));
  return bigger;
}

/** Progress of a table's building: frames done, frames in all, the stage in words. */
export type TableProgress = (done: number, total: number, stage: string) => void;

/** The largest view buffer kept between views: 2^25 values, 256 MiB (10 h at 10 classes is 10.8 M). */
const SCRATCH_MAX_VALUES = 2 ** 25;

/** Frames summarised between progress reports while a table is built. */
const TABLE_CHUNK_FRAMES = 4096;

/** Below this many missing rows a table is built on one thread (the other's start and copy cost more). */
const TWO_THREAD_MIN_FRAMES = 16_384;

const TABLE_STAGE = 'fused scores of the recording';
const TABLE_CANCELLED = 'building the fused-score tables was cancelled';

export class HeldRecording {
  /** The recording's columns, with room to grow; `view()` is the trace of what is held. */
  private columns: Trace;
  private readonly tables = new Map<string, FusedScoreTable>();
  /** Each table's share being built on another thread (tableOnTwoThreads): rows [from, to). */
  private readonly sharesInFlight = new Map<
    FusedScoreTable,
    { from: number; to: number; parts: Promise<FusedScoreTableParts | null> }
  >();
  private scratchValues = new Float64Array(0);

  /**
   * A buffer of at least `length` values, the same one from view to view (TraceSource.scratch),
   * with room for a recording still growing; above SCRATCH_MAX_VALUES a fresh one each time (an
   * every-class view of an hour at 1,000 classes would otherwise keep 864 MB for good).
   */
  readonly scratch = (length: number): Float64Array => {
    if (length > SCRATCH_MAX_VALUES) return new Float64Array(length);
    const held = this.scratchValues.length;
    if (held < length) {
      this.scratchValues = new Float64Array(0); // the old one is garbage before the new one is made
      this.scratchValues = new Float64Array(Math.min(SCRATCH_MAX_VALUES, Math.max(length, Math.ceil(held * 1.5))));
    }
    return this.scratchValues;
  };

  private constructor(
    readonly recordingId: number,
    trace: Trace,
  ) {
    this.columns = trace;
  }

  /** The recording after `rows` (a new recording when it is not this one's next rows). */
  static apply(held: HeldRecording | null, rows: RecordingRows): HeldRecording {
    if (rows.kind === 'whole') return new HeldRecording(rows.recordingId, rows.trace);
    if (held === null || held.recordingId !== rows.recordingId || held.frameCount !== rows.from)
      throw new Error(
        `the metrics worker holds ${held === null ? 'no recording' : `recording ${held.recordingId} at ${held.frameCount} frames`}, not recording ${rows.recordingId} at ${rows.from}`,
      );
    held.append(rows.rows, rows.labels);
    return held;
  }

  get frameCount(): number {
    return this.columns.frameCount;
  }

  /** The trace of every frame held (views of the columns). */
  view(): Trace {
    const n = this.columns.frameCount;
    const k = this.columns.classCount;
    const c = this.columns;
    const column = (m: MetadataColumn): MetadataColumn =>
      m.kind === 'category' ? { ...m, codes: m.codes.subarray(0, n) } : { ...m, values: m.values.subarray(0, n) };
    return {
      ...c,
      timestampsSeconds: c.timestampsSeconds.subarray(0, n),
      zStatic: c.zStatic.subarray(0, n * k),
      zDyn: c.zDyn.subarray(0, n * k),
      uRef: c.uRef.subarray(0, n),
      labels: c.labels?.subarray(0, n) ?? null,
      metadata: Object.fromEntries(Object.entries(c.metadata).map(([name, m]) => [name, column(m)])),
      ...(c.features === undefined
        ? {}
        : { features: { width: c.features.width, values: c.features.values.subarray(0, n * c.features.width) } }),
    };
  }

  /**
   * The fused-score table of every frame held at `temperature` (`squares` for the Brier terms),
   * built once and extended by the rows that arrived since, reporting its progress.
   */
  table(
    temperature: number,
    squares: boolean,
    onProgress?: TableProgress,
    signal?: CancelSignal,
    /** Build only up to this row (tableOnTwoThreads' first half); default every row held. */
    upTo = this.frameCount,
  ): FusedScoreTable {
    const key = `${temperature} ${squares}`;
    let table = this.tables.get(key);
    if (table === undefined) {
      // one with squares answers everything the one without does
      table =
        this.tables.get(`${temperature} true`) ?? new FusedScoreTable(this.columns.classCount, temperature, squares);
      this.tables.set(key, table);
    }
    const view = this.view();
    const total = this.frameCount;
    for (
      let to = Math.min(upTo, table.entryCount + TABLE_CHUNK_FRAMES);
      table.entryCount < upTo;
      to += TABLE_CHUNK_FRAMES
    ) {
      // a cancel keeps the chunks built so far: the next view goes on from there
      stopIfCancelled(signal, TABLE_CANCELLED);
      table.extend(view, Math.min(upTo, to));
      onProgress?.(table.entryCount, total, TABLE_STAGE);
    }
    return table;
  }

  /**
   * The table at `temperature` made whole on two threads (the first view of a long loaded
   * recording): `share` builds the second half of the missing rows on another thread from the
   * logits in place (they must be in shared memory, as a loaded trace's are) while this thread
   * builds the first half chunk by chunk, reporting its progress and polling `signal`; the halves
   * are merged in order, the same entries as table() builds alone. With fewer than
   * TWO_THREAD_MIN_FRAMES rows missing, logits not in shared memory or a share that fails, this
   * thread builds what is missing (table()).
   */
  async tableOnTwoThreads(
    temperature: number,
    squares: boolean,
    share: (request: TableRowsRequest) => Promise<FusedScoreTableParts>,
    onProgress?: TableProgress,
    signal?: CancelSignal,
  ): Promise<void> {
    stopIfCancelled(signal, TABLE_CANCELLED);
    const mine = this.table(temperature, squares, undefined, signal, 0);
    const total = this.frameCount;
    const { zStatic, zDyn, classCount } = this.columns;
    // a share handed over by a view that was cancelled is still on its way: this view waits for it
    let pending = this.sharesInFlight.get(mine);
    if (pending === undefined || pending.from < mine.entryCount || pending.to !== total) {
      const missing = total - mine.entryCount;
      if (missing < TWO_THREAD_MIN_FRAMES || !logitsShared(zStatic, zDyn)) return;
      const from = mine.entryCount + (missing >> 1);
      const request = { zStatic, zDyn, classCount, temperature, squares: mine.squares, from, to: total };
      pending = { from, to: total, parts: share(request).catch(() => null) };
      this.sharesInFlight.set(mine, pending);
    }
    // a chunk at a time, yielding between chunks: a cancel reaches this thread between them (the
    // worker's messages wait for its event loop); it keeps what was built, and the share in flight
    while (mine.entryCount < pending.from) {
      await new Promise((resolve) => setImmediate(resolve));
      const upTo = Math.min(pending.from, mine.entryCount + TABLE_CHUNK_FRAMES);
      this.table(temperature, squares, (done) => onProgress?.(done, total, TABLE_STAGE), signal, upTo);
    }
    const parts = await pending.parts;
    this.sharesInFlight.delete(mine);
    // a helper that failed, or rows this thread built meanwhile: table() builds what is missing here
    if (parts === null || mine.entryCount !== pending.from) return;
    const merged = FusedScoreTable.merge(classCount, temperature, [mine.parts(), parts]);
    for (const [key, table] of this.tables) if (table === mine) this.tables.set(key, merged);
    onProgress?.(total, total, TABLE_STAGE);
  }

  private append(rows: Trace, labels: Int32Array | null): void {
    const c = this.columns;
    const from = c.frameCount;
    const n = from + rows.frameCount;
    const k = c.classCount;
    if (rows.classCount !== k) throw new Error(`rows of ${rows.classCount} classes for a recording of ${k}`);
    const extend = <T extends Float32Array | Float64Array | Int32Array>(array: T, added: T, width: number): T => {
      const out = grown(array, from * width, n * width);
      out.set(added.subarray(0, rows.frameCount * width), from * width);
      return out;
    };
    const metadata: Record<string, MetadataColumn> = {};
    for (const [name, added] of Object.entries(rows.metadata)) {
      const held = c.metadata[name];
      if (added.kind === 'category') {
        const codes = held?.kind === 'category' ? held.codes : new Int32Array(from).fill(-1);
        // the dictionary may have grown: the rows carry all of it
        metadata[name] = { kind: 'category', codes: extend(codes, added.codes, 1), dictionary: added.dictionary };
      } else {
        const values = held?.kind === 'number' ? held.values : new Float64Array(from).fill(Number.NaN);
        metadata[name] = { kind: 'number', values: extend(values, added.values, 1) };
      }
    }
    this.columns = {
      ...c,
      frameCount: n,
      timestampsSeconds: extend(c.timestampsSeconds, rows.timestampsSeconds, 1),
      zStatic: extend(c.zStatic, rows.zStatic, k),
      zDyn: extend(c.zDyn, rows.zDyn, k),
      uRef: extend(c.uRef, rows.uRef, 1),
      labels,
      labelNames: rows.labelNames,
      metadata,
      ...(c.features === undefined || rows.features === undefined
        ? {}
        : {
            features: {
              width: c.features.width,
              values: extend(c.features.values, rows.features.values, c.features.width),
            },
          }),
    };
  }
}
