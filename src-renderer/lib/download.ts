/**
 * The desk's one way out for a file it makes (a figure, a bindings file): a download, which
 * Electron turns into a save dialog and a browser into its downloads.
 */
export function download(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
