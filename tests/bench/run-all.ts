/** `npm run bench`: every benchmark, printing figures and ratios measured in this run. */
import { availableParallelism, cpus } from 'node:os';
import { runCalibratorsBench } from './calibrators.bench';
import { runCliBench } from './cli.bench';
import { runDeployBench } from './deploy.bench';
import { runDeskBench } from './desk.bench';
import { runDriftBench } from './drift.bench';
import { runEngineBench } from './engine.bench';
import { runFieldScaleBench } from './field-scale.bench';
import { runGateReplayBench } from './gate-replay.bench';
import { runHardwareBench } from './hardware.bench';
import { runHeadsBench } from './heads.bench';
import { runMetricsBench } from './metrics.bench';
import { runTuningBench } from './tuning.bench';

const benches: Record<string, () => void | Promise<void>> = {
  gate: runGateReplayBench,
  metrics: runMetricsBench,
  calibrators: runCalibratorsBench,
  engine: runEngineBench,
  desk: runDeskBench,
  deploy: runDeployBench,
  tuning: runTuningBench,
  cli: runCliBench,
  field: runFieldScaleBench,
  drift: runDriftBench,
  heads: runHeadsBench,
  hardware: runHardwareBench,
};
const only = process.argv.slice(2);
process.stdout.write(
  `Knob Studio benchmarks, Node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'})\n`,
);
for (const [name, run] of Object.entries(benches)) if (only.length === 0 || only.includes(name)) await run();
