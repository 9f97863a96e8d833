import { KnobError } from '../../../src-shared/errors';

/**
 * The questions the desk asks the operator (one on screen at a time, answered through its buttons),
 * and the two flows that ask them: a call that would discard a recording with unsaved work, and a
 * model load that meets an output calibrator fitted on another model. The backend refuses both
 * without the answer, so the desk can never discard or keep silently.
 */
export interface Confirmation {
  title: string;
  message: string;
  confirmLabel: string;
  /** The other answer's label (default Cancel); Escape gives that answer too. */
  cancelLabel: string;
  answer(confirmed: boolean): void;
}

export class Confirmations {
  /** The question on screen; null when none. */
  confirmation = $state.raw<Confirmation | null>(null);

  /** Asks the operator; resolves with the answer (a new question answers the one on screen with no). */
  confirm(title: string, message: string, confirmLabel: string, cancelLabel = 'Cancel'): Promise<boolean> {
    this.confirmation?.answer(false);
    return new Promise((resolve) => {
      this.confirmation = {
        title,
        message,
        confirmLabel,
        cancelLabel,
        answer: (confirmed) => {
          this.confirmation = null;
          resolve(confirmed);
        },
      };
    });
  }

  /**
   * Runs a call that may discard the current recording: first without `discard`; when the backend
   * says it would discard unsaved work, the operator decides, and only a yes repeats it with
   * `discard: true`. Resolves to null when the operator said no.
   */
  async discarding<T>(work: (discard: boolean) => Promise<T>): Promise<T | null> {
    try {
      return await work(false);
    } catch (error) {
      if (!(error instanceof KnobError && error.code === 'WOULD_DISCARD')) throw error;
      const confirmed = await this.confirm(
        'Discard the recording?',
        `${error.message}. Export it first to keep it.`,
        'Discard it',
      );
      return confirmed ? work(true) : null;
    }
  }

  /**
   * Runs a model load that may meet an output calibrator fitted on another model: first without a
   * choice; when the backend asks, the operator keeps it on the new model or drops it (Escape drops).
   */
  async choosingCalibrator<T>(work: (choice: 'keep' | 'drop' | undefined) => Promise<T>): Promise<T> {
    try {
      return await work(undefined);
    } catch (error) {
      if (!(error instanceof KnobError && error.code === 'CALIBRATOR_OF_ANOTHER_MODEL')) throw error;
      const keep = await this.confirm('Keep the output calibrator?', error.message, 'Keep it', 'Drop it');
      return work(keep ? 'keep' : 'drop');
    }
  }
}
