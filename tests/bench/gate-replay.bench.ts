/**
 * Issue 2 benchmark: gate-only replay throughput per variant, and full replay (gate + fusion +
 * top-1 confidence) of 1,000,000 frames x 10 classes, with numpy's vectorised fusion measured in
 * the same run for scale. Prints figures and ratios; never fails on time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  DEFAULT_GATE_SETTINGS,
  GATE_DISCRETIZATIONS,
  GATE_VARIANTS,
  createGateState,
  runGate,
} from '../../src-shared/gate';
import { GateReplayer, allocateReplayOutput } from '../../src-shared/trace';
import { syntheticTrace } from '../support/synthetic-trace';
import { row, time } from './bench-timing';

const FRAMES = 1_000_000;
const CLASSES = 10;

const NUMPY_SCRIPT = `
import sys, time
import numpy as np
n, k = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(1)
zs = rng.uniform(-1, 1, (n, k)).astype(np.float32)
zd = rng.uniform(-3, 3, (n, k)).astype(np.float32)
g = rng.uniform(-0.1, 1.1, n)
best = float('inf')
for _ in range(5):
    t0 = time.perf_counter()
    gc = np.clip(g, 0.0, 1.0)[:, None]
    z = (1.0 - gc) * zs + gc * zd
    m = z.max(axis=1)
    top1 = z.argmax(axis=1)
    conf = 1.0 / np.exp(z - m[:, None]).sum(axis=1)
    best = min(best, time.perf_counter() - t0)
print(best * 1000.0)
`;

function numpyFusionMs(): { ms: number; python: string } | { ms: null; reason: string } {
  for (const python of ['/usr/bin/python3', 'python3']) {
    if (python.startsWith('/') && !existsSync(python)) continue;
    const result = spawnSync(python, ['-c', NUMPY_SCRIPT, String(FRAMES), String(CLASSES)], { encoding: 'utf8' });
    if (result.status === 0) return { ms: Number(result.stdout.trim()), python };
  }
  return { ms: null, reason: 'no python3 with numpy found' };
}

export function runGateReplayBench(): void {
  process.stdout.write(`\nGate replay: ${FRAMES.toLocaleString('en')} frames, K = ${CLASSES}, one thread\n`);
  const trace = syntheticTrace({ frames: FRAMES, classCount: CLASSES, uRef: (i) => 0.5 + 0.4 * Math.sin(i / 500) });
  const jittered = syntheticTrace({ frames: FRAMES, classCount: CLASSES, jitter: 0.2 });
  const g = new Float64Array(FRAMES);
  const gateOutput = { g, v: new Float64Array(FRAMES) };

  // Warm the shared kernel on every variant first, so no variant pays for V8's first optimisation.
  for (const variant of GATE_VARIANTS) {
    for (const discretization of GATE_DISCRETIZATIONS) {
      runGate(
        { ...DEFAULT_GATE_SETTINGS, variant, discretization },
        trace,
        0,
        FRAMES,
        createGateState(0.5),
        gateOutput,
      );
    }
  }
  for (const variant of GATE_VARIANTS) {
    for (const discretization of GATE_DISCRETIZATIONS) {
      const settings = { ...DEFAULT_GATE_SETTINGS, variant, discretization };
      const t = time(() => runGate(settings, trace, 0, FRAMES, createGateState(0.5), gateOutput));
      row(
        `gate only, ${variant}, ${discretization}, constant dt`,
        `${(FRAMES / t.bestMs / 1e3).toFixed(1)} M frames/s (median ${(FRAMES / t.medianMs / 1e3).toFixed(1)}), GCs ${t.gcEvents}`,
      );
    }
  }
  const irregular = time(
    () => runGate(DEFAULT_GATE_SETTINGS, jittered, 0, FRAMES, createGateState(0.5), gateOutput),
    3,
    1,
  );
  row(
    'gate only, second-order, zoh, irregular dt (every frame)',
    `${(FRAMES / irregular.bestMs / 1e3).toFixed(1)} M frames/s, GCs ${irregular.gcEvents}`,
  );

  const out = allocateReplayOutput(FRAMES, CLASSES, false);
  const full = time(() => {
    out.clampedInputs = 0;
    new GateReplayer(DEFAULT_GATE_SETTINGS).advance(trace, 0, FRAMES, out);
  });
  row(
    'full replay (gate + fusion + top-1 confidence)',
    `best ${full.bestMs.toFixed(1)} ms, median ${full.medianMs.toFixed(1)} ms, GCs ${full.gcEvents}`,
  );
  const gateOnly = time(() => runGate(DEFAULT_GATE_SETTINGS, trace, 0, FRAMES, createGateState(0.5), gateOutput));
  row('  of which the gate', `${((100 * gateOnly.bestMs) / full.bestMs).toFixed(1)} %`);
  const numpy = numpyFusionMs();
  if (numpy.ms === null) {
    row('numpy vectorised fusion + top-1 (no gate)', `not measured: ${numpy.reason}`);
  } else {
    row(`numpy vectorised fusion + top-1 (no gate), ${numpy.python}`, `best ${numpy.ms.toFixed(1)} ms`);
    row('ratio: our full replay / numpy fusion alone', `${(full.bestMs / numpy.ms).toFixed(2)}`);
  }
  process.stdout.write(
    '  targets: full replay <= 200 ms on one core of a 2-core build machine; second-order ZOH gate >= 100 M frames/s\n',
  );
}
