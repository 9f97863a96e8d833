import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import {
  KeptRunSchema,
  NO_ANNOTATION,
  RECENT_RUN_ID,
  RecentRunsLimitSchema,
  RunAnnotationSchema,
  type KeptRun,
  type RecentRun,
  type RecentRuns,
  type RunAnnotation,
} from '../../../src-shared/api/recent-runs';
import { KnobError } from '../../../src-shared/errors';
import { parseJsonText } from '../../../src-shared/json-text';
import type { Trace } from '../../../src-shared/trace/trace';
import { readUserText } from '../files/user-files';
import { outputLength, writeOutputFile } from '../files/output-files';
import { readTraceFile, traceFileChunks, type RecordedRun, type TraceFile } from '../recording/trace-arrow';
import type { StoredProvenance } from '../report/provenance';
import { withFolderLock, type FolderLockOptions } from './folder-lock';

/**
 * The recent-runs folder: each kept recording is a trace file (<id>.arrow, its entry and its
 * provenance in the file's context, so the folder can be re-indexed from its files alone), listed
 * newest first in index.json, with the folder's size limit in limit.json. Keeping a run that takes
 * the folder past its limit removes the oldest runs first; a limit of 0 keeps nothing. Every write
 * is atomic (a crash leaves the previous file), and a damaged index is rebuilt from the files.
 *
 * Several processes may share the folder (two browser-mode hosts, the desktop app and a host):
 * run ids carry 48 random bits besides the time, so two processes never pick the same one, and
 * every change reads the index and limit afresh, changes them and writes them back under the
 * folder's lock (folder-lock.ts), so no process overwrites another's runs. describe() and find()
 * give the folder as this process last read it (at each change, or refresh()).
 *
 * The operator's names, tags and notes of runs are kept in annotations.json beside the index (a
 * few bytes to write, never the run's trace file): keeping a run again keeps them, and a run
 * removed for the size limit takes its annotation with it.
 */
export const DEFAULT_RECENT_RUNS_LIMIT_BYTES = 1024 ** 3;

const INDEX_FILE = 'index.json';
const LIMIT_FILE = 'limit.json';
const ANNOTATIONS_FILE = 'annotations.json';
const IndexSchema = z.strictObject({ formatVersion: z.literal(1), runs: z.array(KeptRunSchema) });
/** annotations.json: each run id's annotation. */
interface AnnotationsFile {
  formatVersion: 1;
  annotations: Record<string, RunAnnotation>;
}
/** The file's frame, each entry then checked on its own: one bad entry hides no other. */
const AnnotationsFrameSchema = z.strictObject({
  formatVersion: z.literal(1),
  annotations: z.record(z.string(), z.unknown()),
});
const LimitSchema = z.strictObject({ limitBytes: RecentRunsLimitSchema });

/** What a run is, as the session knows it when keeping it (the store adds id, time and size). */
export type RunDescription = Omit<KeptRun, 'id' | 'keptAt' | 'bytes'>;

export interface KeepRequest {
  trace: Trace;
  run: RecordedRun;
  provenance: StoredProvenance;
  description: RunDescription;
  /** Rewrite this run (a recording kept before that has grown or got labels since); null for a new one. */
  id: string | null;
}

function compactTime(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/** run-<UTC second>-<12 hex digits>: readable, sorted by time, unique across processes. */
function newRunId(now: Date): string {
  return `run-${compactTime(now)}-${randomBytes(6).toString('hex')}`;
}

/** What the folder holds now: its limit (null: none set) and its runs, from the index or the files. */
async function readFolder(
  folder: string,
  logger: Logger | null,
): Promise<{
  limitBytes: number | null;
  runs: KeptRun[];
  annotations: Record<string, RunAnnotation>;
  /** annotations.json is there and cannot be read: it is moved aside, never overwritten. */
  annotationsDamaged: boolean;
  rewrite: boolean;
}> {
  const limit = await readJson(join(folder, LIMIT_FILE), LimitSchema);
  const index = await readJson(join(folder, INDEX_FILE), IndexSchema);
  const listed = index?.runs ?? (await rebuildIndex(folder, logger));
  const present = new Set((await readdir(folder)).filter((name) => name.endsWith('.arrow')));
  const runs = listed.filter((run) => present.has(`${run.id}.arrow`));
  const { annotations, damaged: annotationsDamaged } = await readAnnotations(join(folder, ANNOTATIONS_FILE));
  if (annotationsDamaged)
    logger?.warn(
      { file: ANNOTATIONS_FILE },
      'the runs annotations are not all readable: the readable ones are listed, the file is kept aside at the next annotation',
    );
  return {
    limitBytes: limit?.limitBytes ?? null,
    runs,
    annotations,
    annotationsDamaged,
    rewrite: index === null || runs.length !== listed.length,
  };
}

export interface RecentRunsOptions {
  defaultLimitBytes?: number;
  logger?: Logger;
  /** The folder lock's timings (tests). */
  lock?: FolderLockOptions;
}

export class RecentRunsStore {
  private queue: Promise<unknown> = Promise.resolve();
  private limitBytes: number;
  private runs: KeptRun[] = [];
  private annotations: Record<string, RunAnnotation> = {};
  private annotationsDamaged = false;

  private constructor(
    readonly folder: string,
    private readonly defaultLimitBytes: number,
    private readonly logger: Logger | null,
    private readonly lockOptions: FolderLockOptions,
  ) {
    this.limitBytes = defaultLimitBytes;
  }

  /** Opens (creating) the folder; its index, or one rebuilt from its trace files. */
  static async open(folder: string, options: RecentRunsOptions = {}): Promise<RecentRunsStore> {
    await mkdir(folder, { recursive: true });
    const store = new RecentRunsStore(
      folder,
      options.defaultLimitBytes ?? DEFAULT_RECENT_RUNS_LIMIT_BYTES,
      options.logger ?? null,
      options.lock ?? {},
    );
    await store.locked(async () => undefined);
    return store;
  }

  /** Reads the folder again (another process may have kept or removed runs since). */
  refresh(): Promise<RecentRuns> {
    // in the queue: a listing read before a keep of this process finished must not replace its result
    return this.serial(async () => {
      this.adopt(await readFolder(this.folder, this.logger));
      return this.describe();
    });
  }

  describe(): RecentRuns {
    return {
      enabled: true,
      folder: this.folder,
      limitBytes: this.limitBytes,
      usedBytes: this.runs.reduce((sum, run) => sum + run.bytes, 0),
      runs: this.runs.map((run) => this.annotated(run)),
    };
  }

  find(id: string): RecentRun | null {
    const run = this.runs.find((kept) => kept.id === id);
    return run === undefined ? null : this.annotated(run);
  }

  /**
   * Names, tags and notes a run (replacing what it had). Refused for a run the folder no longer
   * holds (another process or the size limit removed it).
   */
  annotate(id: string, annotation: RunAnnotation): Promise<RecentRuns> {
    return this.locked(async () => {
      if (!this.runs.some((run) => run.id === id))
        throw new KnobError('NOT_AVAILABLE', `no recent run '${id}' to annotate (it may have been removed)`);
      this.annotations = { ...this.annotations, [id]: annotation };
      await this.writeAnnotations();
      return this.describe();
    });
  }

  /** The folder as readFolder read it becomes this store's view of it. */
  private adopt(read: Awaited<ReturnType<typeof readFolder>>): void {
    this.limitBytes = read.limitBytes ?? this.defaultLimitBytes;
    this.runs = read.runs;
    this.annotations = read.annotations;
    this.annotationsDamaged = read.annotationsDamaged;
  }

  private annotated(run: KeptRun): RecentRun {
    return { ...run, ...(this.annotations[run.id] ?? NO_ANNOTATION) };
  }

  /**
   * Keeps a recording (a new run, or the same run again when `id` names one). Null when the limit
   * cannot hold it: the folder then keeps nothing of it.
   */
  keep(request: KeepRequest): Promise<RecentRun | null> {
    return this.locked(async () => {
      const now = new Date();
      // a run another process removed since is kept as a new one
      const existing = request.id === null ? null : this.find(request.id);
      const id = existing?.id ?? newRunId(now);
      const entry = { ...request.description, id, keptAt: now.toISOString() };
      const chunks = traceFileChunks(request.trace, request.run, {
        provenance: request.provenance,
        recentRun: { ...entry, bytes: 0 },
      });
      const bytes = outputLength(chunks);
      if (bytes > this.limitBytes) {
        if (existing) await this.remove([existing]);
        return null;
      }
      await writeOutputFile(this.path(id), chunks);
      const kept: KeptRun = { ...entry, bytes };
      this.runs = [kept, ...this.runs.filter((run) => run.id !== id)];
      await this.evict();
      await this.writeIndex();
      this.logger?.info({ id, frames: kept.frameCount, bytes: kept.bytes }, 'recording kept as a recent run');
      return this.find(id);
    });
  }

  /** The run's trace file, read and checked like any trace the operator opens. */
  async read(id: string): Promise<{ run: RecentRun; file: TraceFile }> {
    // one that another process kept since this one last read the folder
    if (this.find(id) === null) await this.refresh();
    const run = this.find(id);
    if (run === null) throw new KnobError('NOT_AVAILABLE', `no recent run '${id}' (it may have been removed)`);
    // a kept-class recording is kept as it is: its views and refusals are the loaded trace's
    return { run, file: await readTraceFile(this.path(id), undefined, 'kept classes too') };
  }

  setLimit(limitBytes: number): Promise<RecentRuns> {
    return this.locked(async () => {
      this.limitBytes = limitBytes;
      await writeOutputFile(join(this.folder, LIMIT_FILE), `${JSON.stringify({ limitBytes })}\n`);
      await this.evict();
      await this.writeIndex();
      return this.describe();
    });
  }

  path(id: string): string {
    return join(this.folder, `${id}.arrow`);
  }

  /** Removes the oldest runs until the folder fits its limit. */
  private async evict(): Promise<void> {
    let used = this.runs.reduce((sum, run) => sum + run.bytes, 0);
    const removed: KeptRun[] = [];
    for (let i = this.runs.length - 1; i >= 0 && used > this.limitBytes; i--) {
      used -= this.runs[i].bytes;
      removed.push(this.runs[i]);
    }
    if (removed.length > 0) await this.remove(removed);
  }

  private async remove(runs: KeptRun[]): Promise<void> {
    const ids = new Set(runs.map((run) => run.id));
    this.runs = this.runs.filter((run) => !ids.has(run.id));
    await Promise.all(runs.map((run) => rm(this.path(run.id), { force: true })));
    if (runs.some((run) => this.annotations[run.id] !== undefined)) {
      this.annotations = Object.fromEntries(Object.entries(this.annotations).filter(([id]) => !ids.has(id)));
      await this.writeAnnotations();
    }
    this.logger?.info({ ids: [...ids] }, 'recent runs removed for the size limit');
  }

  private async writeIndex(): Promise<void> {
    await writeOutputFile(
      join(this.folder, INDEX_FILE),
      `${JSON.stringify({ formatVersion: 1, runs: this.runs } satisfies z.input<typeof IndexSchema>)}\n`,
    );
  }

  private async writeAnnotations(): Promise<void> {
    const path = join(this.folder, ANNOTATIONS_FILE);
    if (this.annotationsDamaged) {
      // what the operator wrote before is kept aside for recovery, not overwritten
      const aside = join(
        this.folder,
        `annotations.damaged-${compactTime(new Date())}-${randomBytes(3).toString('hex')}.json`,
      );
      // a file gone meanwhile needs no keeping; any other failure stops the write (nothing overwritten)
      await rename(path, aside).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.annotationsDamaged = false;
      this.logger?.warn({ file: aside }, 'the unreadable runs annotations were kept aside');
    }
    await writeOutputFile(
      path,
      `${JSON.stringify({ formatVersion: 1, annotations: this.annotations } satisfies AnnotationsFile)}\n`,
    );
  }

  /**
   * A change to the folder: one at a time in this process, under the folder's lock across
   * processes, on the folder as it is now (read afresh; written back when it was found damaged).
   */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    return this.serial(() =>
      withFolderLock(
        this.folder,
        async () => {
          const read = await readFolder(this.folder, this.logger);
          this.adopt(read);
          if (read.rewrite) await this.writeIndex();
          return work();
        },
        this.lockOptions,
      ),
    );
  }

  /** One change at a time in this process: keeps and limit changes never interleave their file writes. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * The operator's annotations: none when the file is missing; the valid entries, and `damaged`,
 * when the file is not JSON, not the format, or holds an entry that is not a valid annotation of a
 * run id. A read that fails for another reason (permissions, a busy disk) is an error, not damage:
 * nothing would then be moved aside or rewritten.
 */
async function readAnnotations(
  path: string,
): Promise<{ annotations: Record<string, RunAnnotation>; damaged: boolean }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { annotations: {}, damaged: false };
    throw error;
  }
  let frame: z.infer<typeof AnnotationsFrameSchema>;
  try {
    frame = AnnotationsFrameSchema.parse(JSON.parse(text));
  } catch {
    return { annotations: {}, damaged: true };
  }
  const annotations: Record<string, RunAnnotation> = {};
  let damaged = false;
  for (const [id, entry] of Object.entries(frame.annotations)) {
    const parsed = RunAnnotationSchema.safeParse(entry);
    if (RECENT_RUN_ID.test(id) && parsed.success) annotations[id] = parsed.data;
    else damaged = true;
  }
  return { annotations, damaged };
}

/** A JSON file of the folder, or null when it is missing or not what it should be. */
async function readJson<T>(path: string, schema: z.ZodType<T>): Promise<T | null> {
  try {
    const parsed = schema.safeParse(parseJsonText(await readUserText(path, 'table'), path));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The index from the trace files' own entries (newest first); files that are not runs are left alone. */
async function rebuildIndex(folder: string, logger: Logger | null): Promise<KeptRun[]> {
  const runs: KeptRun[] = [];
  for (const name of await readdir(folder)) {
    const id = name.replace(/\.arrow$/, '');
    if (!name.endsWith('.arrow') || !RECENT_RUN_ID.test(id)) continue;
    try {
      const path = join(folder, name);
      const file = await readTraceFile(path, undefined, 'kept classes too');
      const entry = KeptRunSchema.safeParse(file.context.recentRun);
      if (entry.success && entry.data.id === id) runs.push({ ...entry.data, bytes: (await stat(path)).size });
    } catch (error) {
      logger?.warn({ file: name, error: (error as Error).message }, 'a recent run could not be re-indexed');
    }
  }
  if (runs.length > 0) logger?.info({ runs: runs.length }, 'recent runs index rebuilt from the files');
  return runs.sort((a, b) => b.keptAt.localeCompare(a.keptAt));
}
