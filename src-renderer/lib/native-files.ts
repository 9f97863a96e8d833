import type { FileDialogPurpose } from '../../src-shared/api/bridge';

/**
 * Files by path: in the desktop app the native dialog and dropped files give paths (through the
 * preload); a browser page never sees paths, so in browser mode the operator types them.
 */
export function canPickFiles(): boolean {
  return window.knobBridge !== undefined;
}

export async function pickFile(purpose: FileDialogPurpose): Promise<string | null> {
  return window.knobBridge ? window.knobBridge.openFileDialog(purpose) : null;
}

/** The path of a dropped file, or an explanation of why there is none. */
export function droppedPath(event: DragEvent): { path: string } | { error: string } {
  const file = event.dataTransfer?.files[0];
  if (file === undefined) return { error: 'nothing was dropped (drop one file)' };
  if (window.knobBridge === undefined)
    return {
      error: `dropping '${file.name}' needs the desktop app (a browser page cannot see file paths); type its path instead`,
    };
  return { path: window.knobBridge.pathForFile(file) };
}
