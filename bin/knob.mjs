#!/usr/bin/env node
// The `knob` command. Runs the TypeScript sources through tsx, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src-main/cli/knob.ts');
process.exitCode = await main(process.argv.slice(2));
