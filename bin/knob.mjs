#!/usr/bin/env node
// The `knob` command. It runs the build (out/main/knob.js, written by `npm run build` and by every
// test run; KNOB_BUILD_DIR/main/knob.js when the build went there) when that is at least as new as
// every source file, so a command starts in a fraction of the time tsx takes to compile the
// sources; otherwise (a fresh clone, an edit since the last build, or KNOB_FROM_SOURCE=1) it runs
// the TypeScript sources through tsx, so a clone needs no build step and an edit is never run stale.
// The threads and processes a command starts follow the same rule (src-main/core/workers).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKnobMain } from '../src-main/core/workers/build-freshness.mjs';

const main = await loadKnobMain(join(dirname(fileURLToPath(import.meta.url)), '..'));
process.exitCode = await main(process.argv.slice(2));
