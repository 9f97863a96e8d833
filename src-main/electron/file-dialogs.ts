import { dialog, type BrowserWindow } from 'electron';
import { FILE_DIALOG_FILTERS, type FileDialogPurpose } from '../../src-shared/api/bridge';

/** The native open dialog for one file of the given purposes (the menus and the page's Browse share it). */
export async function chooseFileToOpen(
  window: BrowserWindow | null,
  purposes: FileDialogPurpose[],
): Promise<string | null> {
  const options: Electron.OpenDialogOptions = {
    properties: ['openFile'],
    filters: purposes.flatMap((purpose) => FILE_DIALOG_FILTERS[purpose]),
  };
  const result = window ? await dialog.showOpenDialog(window, options) : await dialog.showOpenDialog(options);
  return result.canceled ? null : (result.filePaths[0] ?? null);
}
