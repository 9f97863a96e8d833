/**
 * The folder of the main build's entries under the repository `root` when they may run in place of
 * the sources (the build holds `probeEntry` and no source file is newer), else null.
 */
export function freshMainBuild(root: string, probeEntry?: string): string | null;

/** The `knob` command's main(), from the fresh build under `root`, else from the sources through tsx. */
export function loadKnobMain(root: string): Promise<(args: string[]) => Promise<number>>;
