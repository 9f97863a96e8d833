import {
  API_METHODS,
  type ApiEvent,
  type ApiEventData,
  type ApiMethod,
  type ApiParams,
  type ApiResult,
} from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import { describeIssues } from '../../../src-shared/zod-issues';
import { dirname } from 'node:path';
import { createApiHandlers, type ApiHandler, type ApiHandlers, type Services } from '../api/api-handlers';
import { MetricsWorkerClient } from '../use-cases/metrics-worker-client';
import { Bundles } from '../services/bundles';
import { KnobModels } from '../services/knob-models';
import { Measurements } from '../services/measurements';
import { FieldWatch } from '../services/field-watch';
import { RecentRunsService } from '../services/recent-runs-service';
import { RecordingFiles } from '../services/recording-files';
import { RecordingViews } from '../services/recording-views';
import { localCall, type CallContext } from '../calls/call-context';
import { checkEvent, checkResult, contractCheckingRequested } from '../api/contract-check';
import { APP_NAME, APP_VERSION } from '../app-version';
import { reportError } from '../logging/internal-error';
import { silentLog, type BackendLog } from '../logging/logger';
import type { RecentRunsStore } from '../recent-runs/recent-runs-store';
import type { InferenceLauncher } from '../inference/inference-launcher';
import { Session, type EmitEvent } from '../session/session';

export type BackendEventListener = <E extends ApiEvent>(event: E, data: ApiEventData<E>) => void;

export interface BackendOptions {
  /** Where the backend logs; nothing is logged without one. */
  log?: BackendLog;
  /** Checks every result and event against its schema (default: KNOB_CHECK_CONTRACT=1). */
  checkContract?: boolean;
  /** Where recordings are kept as recent runs (the app's data folder); none are kept without it. */
  recentRuns?: RecentRunsStore | null;
  /** How the inference process is started (default child_process.fork; the Electron shell's utilityProcess). */
  inferenceLauncher?: InferenceLauncher;
}

/**
 * The backend as every host drives it (the Electron shell, the browser-mode host, the tests): the
 * session, the API handlers and the event listeners. `call` is the one path of a request: its
 * params parsed once against the contract, the handler run with the call's context, the result
 * checked when contract checking is on, and any failure that is not bad input logged with its
 * stack under an error id that the returned error carries.
 */
export class KnobBackend {
  readonly session: Session;
  /** The services the handler map composes beside the session (api-handlers.ts). */
  readonly services: Services;
  readonly log: BackendLog;
  private readonly handlers: ApiHandlers;
  private readonly listeners = new Set<BackendEventListener>();
  private readonly checking: boolean;
  /** The metrics worker the measurements and the runs comparison share (closed with the backend). */
  private readonly metrics = new MetricsWorkerClient();

  constructor(options: BackendOptions = {}) {
    this.log = options.log ?? silentLog();
    this.checking = options.checkContract ?? contractCheckingRequested();
    const emit: EmitEvent = (event, data) => this.emit(event, data);
    const recentRuns = options.recentRuns ?? null;
    const session = new Session({
      emit,
      logger: this.log.logger,
      recentRuns,
      ...(options.inferenceLauncher === undefined ? {} : { inferenceLauncher: options.inferenceLauncher }),
    });
    this.session = session;
    const dataFolder = recentRuns === null ? null : dirname(recentRuns.folder);
    const services: Services = (this.services = {
      session,
      views: new RecordingViews(session),
      files: new RecordingFiles(session),
      measurements: new Measurements(session, this.metrics),
      field: new FieldWatch(session),
      bundles: new Bundles(session, dataFolder),
      knobModels: new KnobModels(session, dataFolder),
      runs: new RecentRunsService(session, recentRuns, this.metrics, emit),
    });
    this.handlers = createApiHandlers(services, {
      name: APP_NAME,
      version: APP_VERSION,
      logFile: () => this.log.currentFile(),
    });
  }

  /**
   * Runs one method with untrusted params. Rejects with a KnobError: BAD_REQUEST for params that
   * break the schema, the handler's own typed errors, or INTERNAL (with an errorId, logged) for
   * anything else.
   */
  async call<M extends ApiMethod>(
    method: M,
    params: ApiParams<M> | unknown,
    call: CallContext = localCall(),
  ): Promise<ApiResult<M>> {
    try {
      const parsed = API_METHODS[method].params.safeParse(params ?? {});
      if (!parsed.success) {
        throw new KnobError(
          'BAD_REQUEST',
          `invalid params for ${method}: ${describeIssues(parsed.error.issues, 'params', ['params'])}`,
        );
      }
      const handler = this.handlers[method] as ApiHandler<M>;
      const result = await handler(parsed.data as never, call);
      if (this.checking) checkResult(method, result);
      return result;
    } catch (error) {
      throw KnobError.fromPayload(reportError(this.log.logger, error, { method }));
    }
  }

  /** Same as `call`, for tests and in-process callers that know the method statically. */
  handle<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResult<M>> {
    return this.call(method, params);
  }

  /** A camera frame from the binary frame path (MessagePort or binary WebSocket message). */
  pushFrame(packet: Uint8Array): void {
    this.session.pushFrame(packet);
  }

  subscribe(listener: BackendEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit<E extends ApiEvent>(event: E, data: ApiEventData<E>): void {
    if (this.checking) checkEvent(event, data);
    for (const listener of this.listeners) listener(event, data);
  }

  /** Stops the stream and the inference process (window closed, host shut down). */
  async close(): Promise<void> {
    await this.session.close();
    await this.metrics.close();
    await this.log.flush();
  }
}
