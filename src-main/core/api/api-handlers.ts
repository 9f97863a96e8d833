import type { ApiMethod, ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import type { Session } from '../session/session';
import type { CallContext } from './call-context';

/**
 * The one implementation of every API method, as a map with a handler for each method of the
 * contract: a method without a handler does not compile. Handlers get their params already parsed
 * (once, against the contract's schema, by the backend) and the call's context.
 */
export type ApiHandler<M extends ApiMethod> = (
  params: ApiParsedParams<M>,
  call: CallContext,
) => Promise<ApiResult<M>> | ApiResult<M>;

export type ApiHandlers = { [M in ApiMethod]: ApiHandler<M> };

export interface AppFacts {
  name: string;
  version: string;
  logFile: () => string | null;
}

export function createApiHandlers(session: Session, app: AppFacts): ApiHandlers {
  return {
    'app.info': () => ({ name: app.name, version: app.version, logFile: app.logFile() }),
    'session.get': () => session.describe(),
    'knobs.get': () => session.getKnobs(),
    'knobs.set': (params) => session.setKnobs(params.gate),
    'model.load': ({ discard, calibrator, ...options }) => session.loadModel(options, discard, calibrator),
    'model.info': () => session.modelInfo(),
    'source.open': (params, call) => session.openSource(params, call),
    'source.configure': (params) => session.configureSource(params.schedule, params.seed),
    'source.describeCamera': (params) => session.describeCamera(params),
    'stream.start': (params) => session.start(params),
    'stream.stop': () => session.stop(),
    'stream.playback': (params) => session.setPlayback(params),
    'stream.seek': (params) => session.seek(params.frame),
    'stream.rewind': () => session.seek(0),
    'stream.resetGate': () => session.resetGate(),
    'stream.runOffline': (params, call) => session.runOffline(params, call),
    'recording.reset': (params) => session.resetRecording(params.discard),
    'stream.label': (params) => session.label(params.frame, params.label),
    'labels.undo': () => session.undoLabel(),
    'labels.redo': () => session.redoLabel(),
    'labels.useCorrections': (params) => session.useCorrections(params.use),
    'labels.import': (params) => session.importLabels(params.path, params.classMap),
    'trace.frame': (params) => session.recordedFrame(params.frame),
    'trace.save': (params) => session.saveTrace(params.path),
    'trace.load': (params) => session.loadTrace(params.path, params.discard),
    'calibrator.set': (params) => session.setCalibrator(params.calibrator),
    'calibrator.compare': (params, call) => session.compareCalibrators(params, call.signal),
    'recording.series': (params) => session.recordingSeries(params.maxPoints),
    'runs.list': () => session.recentRunsList(),
    'runs.open': (params) => session.openRecentRun(params.id, params.discard),
    'runs.setLimit': (params) => session.setRecentRunsLimit(params.limitBytes),
    'runs.compare': (params, call) => session.compareRecentRuns(params.a, params.b, call.signal),
    'metrics.snapshot': (params, call) => session.metricsSnapshot(params, call.signal),
    'metrics.compare': (params, call) => session.compare(params.a, params.b, params.lastFrames, call.signal),
    'bundle.export': (params) => session.exportBundle(params.path, params.includeModel),
    'bundle.import': (params) => session.importSettings(params.path),
    'bundle.loadModel': (params) =>
      session.loadBundleModel(params.path, params.modelPath, params.discard, params.calibrator),
    'probe.step': (params, call) => session.stepProbe(params, call),
    'probe.frequency': (params, call) => session.frequencyProbe(params, call),
    'tune.run': (params, call) => session.tune(params, call),
    'analysis.run': (params, call) => session.analyse(params, call.signal),
  };
}
