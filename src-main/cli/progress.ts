/**
 * A progress bar on stderr for work over a second: drawn only on a terminal and never with --json,
 * redrawn at most 10 times a second, erased when done so stdout stays clean.
 */
export interface Progress {
  update(done: number, total: number | null, label?: string): void;
  finish(): void;
}

const SILENT: Progress = { update: () => undefined, finish: () => undefined };

export function createProgress(title: string, enabled: boolean): Progress {
  if (!enabled || !process.stderr.isTTY) return SILENT;
  const started = performance.now();
  let lastDraw = 0;
  let drawn = false;
  return {
    update(done, total, label) {
      const now = performance.now();
      if (now - started < 1000 || now - lastDraw < 100) return;
      lastDraw = now;
      drawn = true;
      const width = 30;
      const fraction = total ? Math.min(1, done / total) : 0;
      const bar = total
        ? `[${'#'.repeat(Math.round(fraction * width)).padEnd(width, '.')}] ${(fraction * 100).toFixed(0).padStart(3)} %`
        : `${done} done`;
      process.stderr.write(`\r${title} ${bar} ${label ?? ''}`.padEnd(80));
    },
    finish() {
      if (drawn) process.stderr.write(`\r${' '.repeat(80)}\r`);
    },
  };
}
