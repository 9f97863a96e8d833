/**
 * Ctrl-C during a long measurement (a probe's recording, a tune) cancels it through its
 * AbortSignal, so the command ends with its one-line 'cancelled' reason and exit code 1 instead of
 * dying mid-write; a second Ctrl-C exits at once.
 */
export function abortOnInterrupt(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nknob: cancelling (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onInterrupt);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onInterrupt) };
}
