import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { RecordingSummary } from '../../../src-shared/api/session-state';
import { errorText } from './error-text';

/**
 * The desk's labelling (issue 27): an explicit, visible labelling mode in which, and only in which,
 * the hotkeys correct the frame on screen; corrections are the operator's own layer over the
 * truth (never into it), with undo and redo; which labels the metrics read is a visible choice;
 * labels for a whole video or an unlabelled folder come from a file.
 *
 * Hotkeys in labelling mode: c the prediction is right; x it is wrong (then the digit of the true
 * class); 0-9 the true class; Escape leaves the mode. Ctrl+Z / Ctrl+Shift+Z (or Ctrl+Y) undo and
 * redo a correction in the mode.
 */
export type LabelEdit = NonNullable<ApiResult<'labels.undo'>>;

export interface LabellingHost {
  api: KnobApi;
  /** The frame on screen (the scrubbed one, else the latest), with its ranked classes. */
  shownFrame(): { frame: number; top: Array<{ classIndex: number }> } | null;
  classCount(): number;
  /** The current recording's label layers (counts, the metrics' choice, undo and redo); null with none. */
  layers(): RecordingSummary['labels'] | null;
  labelName(classIndex: number): string;
  /** A label step changed the recording: the desk adopts its summary and the shown frame's label. */
  adopt(recording: RecordingSummary, edit: LabelEdit | null): void;
}

export class Labelling {
  /** Only in this mode do the hotkeys change labels. */
  on = $state(false);
  awaitingClass = $state(false);
  /** The last step's frame and labels (truth, correction, what the metrics read). */
  lastEdit = $state.raw<LabelEdit | null>(null);
  message = $state<string | null>(null);
  error = $state<string | null>(null);
  importing = $state(false);

  constructor(private readonly host: LabellingHost) {}

  get layers(): RecordingSummary['labels'] | null {
    return this.host.layers();
  }

  toggle(on = !this.on): void {
    this.on = on;
    this.awaitingClass = false;
    this.message = on ? 'labelling mode: c right, x wrong then the class, 0-9 the true class, Esc to leave' : null;
  }

  /** The keyboard in labelling mode; true when the key was the labelling's. */
  handleKey(event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey'>): boolean {
    if (!this.on) return false;
    const key = event.key.toLowerCase();
    if (event.ctrlKey || event.metaKey) {
      if (key === 'z' && !event.shiftKey) void this.undo();
      else if ((key === 'z' && event.shiftKey) || key === 'y') void this.redo();
      else return false;
      return true;
    }
    if (event.altKey) return false;
    if (event.key === 'Escape') this.toggle(false);
    else if (key === 'c') {
      this.awaitingClass = false;
      void this.correct('right');
    } else if (key === 'x') this.awaitingClass = true;
    else if (/^[0-9]$/u.test(event.key) && Number(event.key) < this.host.classCount()) {
      this.awaitingClass = false;
      void this.correct('class', Number(event.key));
    } else return false;
    return true;
  }

  /** The frame on screen corrected: its true class (the predicted one for "right"). */
  async correct(kind: 'right' | 'class', classIndex?: number): Promise<void> {
    const shown = this.host.shownFrame();
    if (shown === null) return;
    const label = kind === 'right' ? shown.top[0]?.classIndex : classIndex;
    if (label === undefined) return;
    await this.step(() => this.host.api.call('stream.label', { frame: shown.frame, label }), 'corrected');
  }

  async undo(): Promise<void> {
    await this.step(() => this.host.api.call('labels.undo', {}), 'undone');
  }

  async redo(): Promise<void> {
    await this.step(() => this.host.api.call('labels.redo', {}), 'redone');
  }

  async useCorrections(use: boolean): Promise<void> {
    try {
      this.host.adopt(await this.host.api.call('labels.useCorrections', { use }), null);
      this.error = null;
    } catch (error) {
      this.error = errorText(error);
    }
  }

  async importFile(path: string, classMap?: string): Promise<void> {
    this.importing = true;
    try {
      const result = await this.host.api.call('labels.import', { path, ...(classMap ? { classMap } : {}) });
      this.host.adopt(result.recording, null);
      this.message = `${result.framesLabelled} frames labelled from ${result.file.kind === 'file' ? result.file.name : path} (${result.rows} rows by ${result.key})`;
      this.error = null;
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.importing = false;
    }
  }

  private async step(call: () => Promise<LabelEdit | null>, done: string): Promise<void> {
    try {
      const edit = await call();
      this.error = null;
      if (edit === null) {
        this.message = `nothing to be ${done}`;
        return;
      }
      this.lastEdit = edit;
      this.host.adopt(edit.recording, edit);
      const correction = edit.correction < 0 ? 'no correction' : `corrected to ${this.host.labelName(edit.correction)}`;
      const truth = edit.truth < 0 ? 'no truth' : `truth ${this.host.labelName(edit.truth)}`;
      this.message = `frame ${edit.frame} ${done}: ${correction} (${truth}); ${edit.labelledFrames} labelled frames`;
    } catch (error) {
      this.error = errorText(error);
    }
  }
}
