/**
 * How the desk opens a file by its name (src-shared/api/file-kinds.ts): each kind's extensions,
 * case and trailing separators ignored, anything else a folder of images; and the native dialogs'
 * filters are the same lists.
 */
import { describe, expect, it } from 'vitest';
import { FILE_DIALOG_FILTERS, isFileDialogPurpose } from '../../src-shared/api/bridge';
import { FILE_KIND_EXTENSIONS, fileKindOf } from '../../src-shared/api/file-kinds';

describe('fileKindOf', () => {
  it('names each kind by its extensions', () => {
    const cases: Array<[string, string]> = [
      ['/m/knob-fmnist.onnx', 'model'],
      ['C:\\models\\Net.ONNX', 'model'],
      ['/out/tuned.knob.zip', 'bundle'],
      ['knob-settings.json', 'bundle'],
      ['/runs/run-1.arrow', 'trace'],
      ['/runs/old.feather', 'trace'],
      ['/v/clip.MP4', 'video'],
      ['/v/cam.y4m', 'video'],
      ['/d/t10k-images-idx3-ubyte.gz', 'dataset'],
      ['/d/test.npz', 'dataset'],
      ['/d/images.npy', 'folder'], // a lone .npy is not a source; its folder is
      ['/d/photos', 'folder'],
      ['/d/photos/', 'folder'],
      ['/d/notes.txt', 'folder'],
    ];
    for (const [path, kind] of cases) expect(fileKindOf(path), path).toBe(kind);
  });

  it("the open dialog's filters are the kinds' extensions", () => {
    expect(FILE_DIALOG_FILTERS.model[0]!.extensions).toEqual(['onnx']);
    expect(FILE_DIALOG_FILTERS.video[0]!.extensions).toEqual(FILE_KIND_EXTENSIONS.video.map((e) => e.slice(1)));
    expect(FILE_DIALOG_FILTERS.trace[0]!.extensions).toEqual(['arrow', 'feather']);
    for (const purpose of ['toString', '__proto__', 'constructor', '', 'MODEL'])
      expect(isFileDialogPurpose(purpose)).toBe(false);
    for (const purpose of Object.keys(FILE_DIALOG_FILTERS)) expect(isFileDialogPurpose(purpose)).toBe(true);
  });
});
