import { basename, dirname } from 'node:path';
import type { ApiResult } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import { replay } from '../../../src-shared/trace/replay';
import { checkOutputFolder } from '../files/output-files';
import { readTraceFile, writeTraceFile } from '../recording/trace-arrow';
import { loadedTraceProvenance } from '../report/provenance';
import { localCall, type CallContext } from '../calls/call-context';
import type { Session } from '../session/session';
import { completeRecording } from '../session/session-recordings';

/** The current recording to and from trace files (trace-arrow.ts): saved as it is, loaded as a new recording. */
export class RecordingFiles {
  constructor(private readonly session: Session) {}

  async save(path: string): Promise<ApiResult<'trace.save'>> {
    this.session.allow('trace.save');
    const recording = this.session.requireRecording();
    if (recording.frameCount === 0) throw new KnobError('NOT_AVAILABLE', 'nothing recorded yet (start a stream first)');
    await checkOutputFolder(dirname(path)); // before the recording is copied and encoded
    const revision = recording.revision;
    const { trace, output } = recording.frozen();
    // the live drift watch's alarms of every frame frozen (its thread steps them a batch behind; a
    // playing stream appends more meanwhile, which this file does not hold)
    await recording.driftWatch?.settled();
    const run = { settings: this.session.knobs.current.gate, output };
    await writeTraceFile(path, trace, run, recording.fileContext(trace.frameCount));
    recording.markSaved(path, revision);
    this.session.announce();
    return { path, frameCount: trace.frameCount, classCount: trace.classCount };
  }

  /**
   * A saved trace becomes the current recording; model and source stay. Reading it reports its
   * progress in bytes (a trace of hours takes seconds). A kept-class trace (`knob compact`, `knob
   * run --keep`) loads too.
   */
  async load(path: string, discard: boolean, call: CallContext = localCall()): Promise<ApiResult<'trace.load'>> {
    const recording = await this.session.loadRecording(discard, async (recordings) => {
      const task = `reading ${basename(path)} (bytes)`;
      // a kept-class trace too: its views are its estimates with their bounds, and what needs every
      // class refuses it by name (requireEveryClass)
      const file = await readTraceFile(path, (read, size) => call.progress(task, read, size), 'kept classes too');
      const gate = this.session.knobs.current.gate;
      const output = file.run?.output ?? replay(file.trace, gate, { logits: 'kept classes too' });
      const options = {
        origin: 'loaded' as const,
        description: `trace ${basename(path)}`,
        provenance: loadedTraceProvenance(file.context, path),
        path,
      };
      const missing = `${basename(path)} has no features of its width`;
      return { recording: completeRecording(recordings, options, { trace: file.trace, output }, missing) };
    });
    return { path, frameCount: recording.frameCount, classCount: recording.trace.classCount };
  }
}
