import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { ShellCommand } from '../../../src-shared/api/bridge';
import { fileKindOf } from '../../../src-shared/api/file-kinds';
import { KnobError } from '../../../src-shared/errors';
import { pathName } from '../path-name';
import type { ErrorSlots } from './error-slots.svelte';
import type { KnobSync } from './knob-sync.svelte';
import type { ModelAndSource } from './model-and-source.svelte';
import type { Runs } from './runs.svelte';

/**
 * Files in and out: a path opened by its kind (file-kinds.ts), as the desk's own controls would
 * open it (how the desktop shell opens what the operator drops on the window, passes to the app or
 * picks in its menus); a bundle exported, or imported with its knobs and then its model; and the
 * shell's other commands.
 */
type ImportedModel = NonNullable<ApiResult<'bundle.import'>['model']> & { bundlePath: string };

export interface FilesHost {
  api: KnobApi;
  slots: ErrorSlots;
  loading: ModelAndSource;
  knobs: KnobSync;
  runs: Runs;
  notify(message: string): void;
  /** The work bar (OfflineRun.track): the call shown with its steps, and its Cancel. */
  track<T>(task: string, total: number | null, call: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export class Files {
  exported = $state.raw<ApiResult<'bundle.export'> | null>(null);
  /** What the last import verified. */
  imported = $state<string | null>(null);
  /** The last imported bundle's model, to load when it is not the one loaded. */
  importedModel = $state<ImportedModel | null>(null);
  /** An export or import in flight (a bundle takes seconds: the panel and the work bar say so). */
  busy = $state<'export' | 'import' | null>(null);
  /** The last export or import the operator cancelled (nothing was written or applied), or null. */
  cancelled = $state<string | null>(null);

  constructor(private readonly host: FilesHost) {}

  /** A model, a bundle or settings file (imported), a trace, a video, a dataset or a folder. */
  async openPath(path: string): Promise<void> {
    const { loading } = this.host;
    switch (fileKindOf(path)) {
      case 'model':
        await loading.loadModel({ path });
        return;
      case 'bundle':
        return this.importFrom(path);
      case 'trace':
        return loading.openTrace(path);
      case 'video':
        await loading.openSource({ kind: 'video', path });
        return;
      case 'dataset':
        await loading.openSource({ kind: 'dataset', path });
        return;
      case 'folder':
        return this.openFolder(path);
    }
  }

  /** Does what the desktop shell asks (its menus, files opened with the app, a recovered crash). */
  async runShellCommand(command: ShellCommand): Promise<void> {
    switch (command.command) {
      case 'open':
        return this.openPath(command.path);
      case 'export-bundle':
        return this.exportTo(command.path);
      case 'open-run':
        return this.host.runs.open(command.id);
      case 'notice':
        this.host.notify(command.message);
    }
  }

  async exportTo(path: string): Promise<void> {
    const result = await this.whileBusy('export', `exporting ${pathName(path)}`, (signal) =>
      this.host.api.call('bundle.export', { path }, { signal }),
    );
    if (result) this.exported = result;
  }

  async importFrom(path: string): Promise<void> {
    const result = await this.whileBusy('import', `importing ${pathName(path)}`, (signal) =>
      this.host.api.call('bundle.import', { path }, { signal }),
    );
    if (result === null) return;
    this.host.knobs.adoptImported(result.knobs);
    this.imported = result.verification;
    this.importedModel = result.model === null ? null : { ...result.model, bundlePath: path };
  }

  /** The imported bundle's model: from the bundle, or from a file the user located (checked by hash). */
  async loadBundleModel(modelPath?: string): Promise<void> {
    const bundle = this.importedModel;
    if (bundle === null) return;
    const params = { path: bundle.bundlePath, ...(modelPath === undefined ? {} : { modelPath }) };
    if (await this.host.loading.loadBundleModel(params)) this.importedModel = { ...bundle, matchesLoaded: true };
  }

  /**
   * One export or import at a time, on the work bar with its steps and Cancel, `busy` saying which
   * while it runs; its error in the export slot. A cancel is no error: it says nothing was written.
   */
  private async whileBusy<T>(
    work: 'export' | 'import',
    task: string,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<T | null> {
    this.busy = work;
    this.cancelled = null;
    try {
      const result = await this.host.track(task, null, call);
      this.host.slots.report('export', null);
      return result;
    } catch (error) {
      const cancelled = error instanceof KnobError && error.code === 'CANCELLED';
      this.host.slots.report('export', cancelled ? null : error);
      if (cancelled)
        this.cancelled = `${task} cancelled: ${work === 'export' ? 'no bundle was written' : 'the knobs are as they were'}`;
      return null;
    } finally {
      this.busy = null;
    }
  }

  /** A folder: of images (an ImageFolder, a CSV manifest's) or, failing that, a NumPy dataset folder. */
  private async openFolder(path: string): Promise<void> {
    const { loading, slots } = this.host;
    if (await loading.openSource({ kind: 'folder', path })) return;
    const asImages = slots.errors.source;
    if (asImages === null) return;
    await loading.openSource({ kind: 'dataset', path });
    if (slots.errors.source !== null) slots.errors.source = asImages;
  }
}
