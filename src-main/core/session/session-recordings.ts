import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { ReplayOutput } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { Recording, type RecordingOptions } from '../recording/recording';
import { runProvenance } from '../report/provenance';
import type { KnobStore } from './knob-store';
import type { OpenedSource } from './session-states';

/**
 * The recordings a session makes: numbered in order (every view says which recording it describes),
 * each with the output calibrator of the knobs, switched off first when the recording cannot feed
 * it (a calibrator that reads features the recording does not keep).
 */
export interface RecordingFactory {
  nextId: number;
  readonly knobs: KnobStore;
}

type CompleteOptions = Omit<RecordingOptions, 'id' | 'calibrator'>;

/** A complete recording (a loaded trace, a recent run, an offline run) with its replayed output. */
export function completeRecording(
  factory: RecordingFactory,
  options: CompleteOptions,
  recorded: { trace: Trace; output: ReplayOutput },
  missingFeatures: string,
): Recording {
  const calibrator = factory.knobs.calibratorFor(recorded.trace.features?.width ?? null, missingFeatures);
  const gateMode = factory.knobs.current.gate.mode;
  return Recording.complete(
    { ...options, id: factory.nextId++, calibrator, gateMode },
    recorded.trace,
    recorded.output,
  );
}

/** The live recording a stream of `source` fills. */
export function liveRecording(factory: RecordingFactory, model: ModelDescription, source: OpenedSource): Recording {
  const calibrator = factory.knobs.calibratorFor(
    source.featureWidth,
    'the live stream records no features of its width',
  );
  return Recording.live(
    {
      id: factory.nextId++,
      calibrator,
      gateMode: factory.knobs.current.gate.mode,
      description: `live: ${source.info.description}`,
      provenance: runProvenance({
        model,
        source: source.info,
        schedule: source.schedule,
        seed: source.seed,
        origin: source.frames === null ? 'live recording (camera)' : 'live recording (file played in the desk)',
      }),
    },
    model,
    source.info.frameRateHz,
    source.featureWidth,
  );
}

/** The recording of an offline run over `source`. */
export function offlineRecording(
  factory: RecordingFactory,
  model: ModelDescription,
  source: OpenedSource,
  result: { trace: Trace; output: ReplayOutput },
): Recording {
  const info = source.frames!.info;
  return completeRecording(
    factory,
    {
      origin: 'offline',
      description: `offline run: ${info.description}`,
      provenance: runProvenance({
        model,
        source: info,
        schedule: source.schedule,
        seed: source.seed,
        origin: 'offline run (desk)',
      }),
    },
    result,
    'the offline run records no features',
  );
}
