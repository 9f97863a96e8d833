/** This process's own peak resident memory in KiB (peak-memory.mjs). */
export function peakRssKb(): number;
