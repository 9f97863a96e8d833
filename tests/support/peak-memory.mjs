// A process's own peak resident memory, in KiB: VmHWM of /proc/self/status on Linux (the high-water
// mark of the memory this process has mapped since its exec), else getrusage's ru_maxrss. Linux
// keeps ru_maxrss across execve, so a child spawned by a process holding gigabytes (the field
// benchmark's synthetic traces) reported its parent's peak as its own.
import { readFileSync } from 'node:fs';

export function peakRssKb() {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match !== null) return Number(match[1]);
  } catch {
    // no /proc (not Linux): the portable figure
  }
  return process.resourceUsage().maxRSS;
}
