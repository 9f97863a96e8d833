/**
 * The folder of the main build's entries under the repository `root` when they may run in place of
 * the sources (the build holds `probeEntry` and no source file is newer), else null.
 */
export function freshMainBuild(root: string, probeEntry?: string): string | null;
