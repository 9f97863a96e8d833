/** `npm run bench`: every benchmark, printing figures and ratios measured in this run. */
import { availableParallelism, cpus } from 'node:os';
import { runGateReplayBench } from './gate-replay.bench';

process.stdout.write(`Knob Studio benchmarks, Node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'})\n`);
runGateReplayBench();
