import type { ApiMethod, ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import type { CallContext } from '../calls/call-context';
import type { Bundles } from '../services/bundles';
import type { KnobModels } from '../services/knob-models';
import type { FieldWatch } from '../services/field-watch';
import type { Measurements } from '../services/measurements';
import type { RecentRunsService } from '../services/recent-runs-service';
import type { RecordingFiles } from '../services/recording-files';
import type { RecordingViews } from '../services/recording-views';
import type { Session } from '../session/session';
import { calibratorTargetOf } from '../session/session-states';

/**
 * The one implementation of every API method, as a map with a handler for each method of the
 * contract: a method without a handler does not compile. Handlers get their params already parsed
 * (once, against the contract's schema, by the backend) and the call's context. Each maps to the
 * session (the state machine's events) or to one service composed beside it.
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

/** The session and the services the handlers map to (knob-backend.ts composes them). */
export interface Services {
  session: Session;
  views: RecordingViews;
  files: RecordingFiles;
  measurements: Measurements;
  bundles: Bundles;
  knobModels: KnobModels;
  runs: RecentRunsService;
  field: FieldWatch;
}

export function createApiHandlers(services: Services, app: AppFacts): ApiHandlers {
  const { session, views, files, measurements, bundles, knobModels, runs, field } = services;
  const { knobs } = session;
  return {
    'app.info': () => ({ name: app.name, version: app.version, logFile: app.logFile() }),
    'session.get': () => session.describe(),
    'knobs.get': () => knobs.current,
    'knobs.set': (params) => knobs.setGate(params.gate),
    'model.load': ({ discard, calibrator, ...options }) => session.loadModel(options, discard, calibrator),
    'model.makeKnob': (params, call) => knobModels.make(params, call),
    'model.info': () => session.describe().model,
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
    'stream.label': (params) => views.label(params.frame, params.label),
    'labels.undo': () => views.undo(),
    'labels.redo': () => views.redo(),
    'labels.useCorrections': (params) => views.useCorrections(params.use),
    'labels.import': (params) => views.importLabels(params.path, params.classMap),
    'trace.frame': (params) => views.frame(params.frame),
    'recording.series': (params) => views.series(params.maxPoints),
    'trace.save': (params) => files.save(params.path),
    'trace.load': (params, call) => files.load(params.path, params.discard, call),
    'calibrator.set': (params) => knobs.setCalibrator(params.calibrator, calibratorTargetOf(session.current)),
    'calibrator.compare': (params, call) => measurements.compareCalibrators(params, call),
    'conformal.sets': (params, call) => measurements.conformalSets(params, call),
    'runs.list': () => runs.list(),
    'runs.open': (params) => runs.open(params.id, params.discard),
    'runs.setLimit': (params) => runs.setLimit(params.limitBytes),
    'runs.compare': (params, call) => runs.compare(params.ids, call.signal),
    'runs.annotate': ({ id, ...annotation }) => runs.annotate(id, annotation),
    'metrics.snapshot': (params, call) => measurements.snapshot(params, call),
    'metrics.compare': (params, call) =>
      measurements.compare(params.a, params.b, params.lastFrames, params.binning, call.signal),
    'bundle.export': (params, call) => bundles.export(params.path, params.includeModel, call),
    'bundle.import': (params, call) => bundles.import(params.path, call),
    'bundle.loadModel': (params) => bundles.loadModel(params.path, params.modelPath, params.discard, params.calibrator),
    'probe.step': (params, call) => measurements.stepProbe(params, call),
    'probe.frequency': (params, call) => measurements.frequencyProbe(params, call),
    'tune.run': (params, call) => measurements.tune(params, call),
    'analysis.run': (params, call) => measurements.analyse(params, call),
    'field.monitor': (params, call) => field.monitor(params, call),
    'field.watchLive': (params) => field.watchLive(params),
    'field.timeline': (params, call) => field.timeline(params, call),
    'field.estimate': (params, call) => field.estimate(params, call),
    'field.review': (params, call) => field.review(params, call),
  };
}
