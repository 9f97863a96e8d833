import type { ApiResult } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import type { LabelEdit } from '../../../src-shared/labels/label-layers';
import { decimationIndices } from '../../../src-shared/plots/decimate';
import { frameReadout, type FrameReadout } from '../../../src-shared/trace/frame-readout';
import { keptFrameReadout } from '../../../src-shared/trace/kept-frame-readout';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import { appliedConditions, switchesAlong } from '../../../src-shared/trace/condition-switches';
import { replay } from '../../../src-shared/trace/replay';
import { rollingSeries } from '../../../src-shared/trace/rolling-series';
import { frameFeatures } from '../../../src-shared/trace/trace-scores';
import { readLabelFile } from '../recording/label-import';
import { ROLLING_WINDOW_FRAMES, type Recording } from '../recording/recording';
import { readClassMapFile } from '../sources/class-map-file';
import { imageToApi, readoutToApi } from '../session/frame-views';
import type { Session } from '../session/session';
import { recordingOf } from '../session/session-states';

/**
 * The current recording as the desk looks into it, at the current knobs: the gate over the whole
 * recording (decimated), one recorded frame replayed for scrubbing, and the operator's labels
 * (corrections over the truth, undoable, and labels imported from a file). Everything is replayed
 * from the trace; nothing here runs the model.
 */
export class RecordingViews {
  constructor(private readonly session: Session) {}

  /** The gate over the whole recording at the current knobs, decimated to `maxPoints` frames. */
  series(maxPoints: number): ApiResult<'recording.series'> {
    const recording = this.session.requireRecording();
    const knobs = this.session.knobs;
    const trace = recording.trace;
    const recorded = { ...trace, frameCount: recording.frameCount };
    const output = replay(recorded, knobs.current.gate, { logits: 'kept classes too' });
    const t = trace.timestampsSeconds.subarray(0, recording.frameCount);
    const kept = decimationIndices(t, output.g, t[0] ?? 0, t[t.length - 1] ?? 1, Math.floor(maxPoints / 4));
    const severity = trace.metadata.severity;
    // the conditions a condition-aware calibrator applies, once for the rolling figures and the switches
    const applied = appliedConditions(trace, recording.frameCount, knobs.calibrator, knobs.current.gate.mode);
    const rolling = rollingSeries(recorded, output.g, knobs.calibrator, ROLLING_WINDOW_FRAMES, kept, applied);
    const conditions =
      applied === null ? null : switchesAlong(applied, knobs.calibrator!.condition!.names, trace.timestampsSeconds);
    return {
      recordingId: recording.id,
      settingsVersion: knobs.current.version,
      frameCount: recording.frameCount,
      tSeconds: kept.map((i) => t[i]),
      g: kept.map((i) => output.g[i]),
      uRef: kept.map((i) => trace.uRef[i]),
      severity: kept.map((i) => (severity?.kind === 'number' ? severity.values[i] : 0)),
      rollingAccuracy: rolling.accuracy,
      rollingConfidence: rolling.confidence,
      rollingWindowFrames: ROLLING_WINDOW_FRAMES,
      ...(conditions === null ? {} : { calibratorConditions: conditions }),
    };
  }

  /** One recorded frame replayed at the current knobs: what the live view showed, for scrubbing. */
  frame(frame: number): ApiResult<'trace.frame'> {
    const recording = this.session.requireRecording();
    if (frame >= recording.frameCount)
      throw new KnobError('INVALID_INPUT', `frame ${frame} is not recorded (${recording.frameCount} frames)`);
    const { current: knobs, calibrator } = this.session.knobs;
    const trace = recording.trace;
    const kept = trace.keptClasses;
    if (kept !== undefined && calibrator !== null) requireEveryClass(trace, "the output calibrator's probabilities");
    const output = replay({ ...trace, frameCount: frame + 1 }, knobs.gate, { logits: 'kept classes too' });
    const k = trace.classCount;
    const features = frameFeatures(trace, frame);
    // the condition the replay applies to the frame, through the hysteresis from the recording's start
    const condition = appliedConditions(trace, frame + 1, calibrator, knobs.gate.mode)?.[frame];
    // a kept-class trace's frame from its kept classes, saying what is estimated
    const readout: FrameReadout & { approximation?: string } =
      kept === undefined
        ? frameReadout(trace.zStatic, trace.zDyn, frame * k, k, output.g[frame], 3, calibrator, features, condition)
        : keptFrameReadout(kept, k, frame, output.g[frame], 3);
    const label = trace.labels![frame];
    const corruption = trace.metadata.corruption;
    const severity = trace.metadata.severity;
    const name = corruption?.kind === 'category' ? corruption.dictionary[corruption.codes[frame]] : undefined;
    const image = recording.image(frame);
    return {
      recordingId: recording.id,
      frame,
      timestampSeconds: trace.timestampsSeconds[frame],
      settingsVersion: knobs.version,
      g: output.g[frame],
      uRef: trace.uRef[frame],
      label: label < 0 ? null : label,
      ...readoutToApi(readout, trace.labelNames),
      corruption: name === undefined || name === 'none' ? null : name,
      severity: severity?.kind === 'number' ? severity.values[frame] : 0,
      image: image === null ? null : imageToApi(image),
      ...(readout.approximation === undefined ? {} : { approximation: readout.approximation }),
    };
  }

  /**
   * The operator's correction of a recorded frame: its own layer over the truth (label-layers.ts),
   * undoable; every view sees it at once when the metrics read corrections.
   */
  label(frame: number, label: number): ApiResult<'stream.label'> {
    return this.labelStep((recording) => recording.correctLabel(frame, label))!;
  }

  undo(): ApiResult<'labels.undo'> {
    return this.labelStep((recording) => recording.undoLabel());
  }

  redo(): ApiResult<'labels.redo'> {
    return this.labelStep((recording) => recording.redoLabel());
  }

  useCorrections(use: boolean): ApiResult<'labels.useCorrections'> {
    this.labelStep((recording) => (recording.useCorrections(use), null));
    return this.session.requireRecording().summary();
  }

  /** Labels from a file for the frames the source left unlabelled (label-import.ts). */
  async importLabels(path: string, classMapPath: string | undefined): Promise<ApiResult<'labels.import'>> {
    this.session.allow('recording.label');
    const recording = this.session.requireRecording();
    // before any file is read (Recording.importLabels holds the rule)
    requireEveryClass(recording.trace, 'importing labels');
    const classMap = classMapPath === undefined ? null : await readClassMapFile(classMapPath);
    const read = await readLabelFile(path, recording.trace, recording.frameCount, classMap);
    // the files were read against this recording: one that replaced it meanwhile has other frames
    if (recordingOf(this.session.current) !== recording)
      throw new KnobError(
        'NOT_AVAILABLE',
        `${path}: the recording changed while the label file was read (another source, run or trace); import it again`,
      );
    this.labelStep((r) => (r.importLabels(read.imported.frames, read.imported.classIndices, path), null));
    recording.noteLabelImport({ file: read.file, frames: read.imported.frames.length });
    return {
      framesLabelled: read.imported.frames.length,
      rows: read.imported.rows,
      key: read.imported.key,
      file: read.file,
      classMapping: read.imported.mapping,
      recording: recording.summary(),
    };
  }

  private labelStep(step: (recording: Recording) => LabelEdit | null): ApiResult<'labels.undo'> {
    const { recording, edit } = this.session.changeLabels(step);
    return edit === null
      ? null
      : {
          frame: edit.frame,
          truth: edit.truth,
          correction: edit.correction,
          label: edit.effective,
          labelledFrames: recording.labelledFrameCount,
          recording: recording.summary(),
        };
  }
}
