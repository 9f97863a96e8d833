import { APP_VERSION } from '../core/app-version';
import { applyInputLimits } from '../core/files/input-limits';
import { UsageError } from './usage-error';

/**
 * The `knob` command: headless access to the same core and src-shared code the app uses.
 * Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage.
 *
 * This entry imports almost nothing, so `knob --help` starts about as fast as Node itself: the
 * commands are a registry of loaders (each command's code is imported only when it runs), a
 * command's full usage (command-usage.ts, which names the values its options take) only for
 * `knob COMMAND --help`, and the log and failure reporting (command-runner.ts) only to run one.
 */
export type Command = (args: string[]) => number | Promise<number>;

interface CommandEntry {
  /** One line for `knob --help`. */
  summary: string;
  load: () => Promise<Command>;
}

const COMMANDS = {
  run: {
    summary: 'run the model over a source once: trace, metrics and report',
    load: async () => (await import('./commands/run')).runCommand,
  },
  replay: {
    summary: 'the same outputs from a recorded trace at any settings, no model',
    load: async () => (await import('./commands/replay')).replayCommand,
  },
  compact: {
    summary: 'a trace with only its leading classes a frame: a tenth of the size, metrics bounded',
    load: async () => (await import('./commands/compact')).compactCommand,
  },
  metrics: {
    summary: 'every calibration metric of scores or a trace, each with its identity',
    load: async () => (await import('./commands/metrics')).metricsCommand,
  },
  calibrate: {
    summary: 'fit output calibrators and compare them on held-out frames',
    load: async () => (await import('./commands/calibrate')).calibrateCommand,
  },
  export: {
    summary: 'the tuned-calibrator bundle of a trace (NAME.knob.zip)',
    load: async () => (await import('./commands/export')).exportCommand,
  },
  verify: {
    summary: 'check a bundle: archive, schema, hashes, step graph against the app',
    load: async () => (await import('./commands/verify')).verifyCommand,
  },
  table: {
    summary: "the paper's Table 2 on Fashion-MNIST-C in reset mode",
    load: async () => (await import('./commands/table')).tableCommand,
  },
  bench: {
    summary: 'bare onnxruntime against the engine, gate and fusion cost, live latency',
    load: async () => (await import('./commands/bench')).benchCommand,
  },
  response: {
    summary: "the gate's step and frequency figures, continuous and discrete",
    load: async () => (await import('./commands/response')).responseCommand,
  },
  corrupt: {
    summary: 'a corrupted copy of an IDX image set',
    load: async () => (await import('./commands/corrupt')).corruptCommand,
  },
  probe: {
    summary: 'measure the gate on the model and a source: step response or Bode plot',
    load: async () => (await import('./commands/probe')).probeCommand,
  },
  analyze: {
    summary: "the paper's analyses of a trace (T_eff, CSR, agreement, oracle advantage)",
    load: async () => (await import('./commands/analyze')).analyzeCommand,
  },
  monitor: {
    summary: 'drift alarms on a trace, labelled or not, at a chosen rate of false alarms',
    load: async () => (await import('./commands/monitor')).monitorCommand,
  },
  estimate: {
    summary: 'accuracy without labels (ATC, DoC), fitted on a labelled reference window',
    load: async () => (await import('./commands/estimate')).estimateCommand,
  },
  conformal: {
    summary: 'split-conformal prediction sets of a trace: coverage and set size, per group',
    load: async () => (await import('./commands/conformal')).conformalCommand,
  },
  timeline: {
    summary: 'calibration over time: metrics over windows with intervals, and change points',
    load: async () => (await import('./commands/timeline')).timelineCommand,
  },
  review: {
    summary: "the frames to label next to narrow a window's calibration error interval most",
    load: async () => (await import('./commands/review')).reviewCommand,
  },
  tune: {
    summary: 'tune the knobs on a trace by replay, judged on held-out frames',
    load: async () => (await import('./commands/tune')).tuneCommand,
  },
  features: {
    summary: "a classifier's penultimate activation as a 'features' output",
    load: async () => (await import('./commands/features')).featuresCommand,
  },
  'fit-heads': {
    summary: "Knob heads fitted on a classifier's features: a Knob-native model",
    load: async () => (await import('./commands/fit-heads')).fitHeadsCommand,
  },
  'model-card': {
    summary: 'regenerate the model card of a Knob-native model',
    load: async () => (await import('./commands/model-card')).modelCardCommand,
  },
} as const satisfies Record<string, CommandEntry>;

export type CommandName = keyof typeof COMMANDS;

const USAGE = `knob — Knob Studio on the command line

Usage: knob COMMAND [options]   (knob COMMAND --help: its options and defaults)

${Object.entries(COMMANDS)
  .map(([name, entry]) => `  ${name.padEnd(11)} ${entry.summary}`)
  .join('\n')}

Every command also takes --help, --verbose (debug logging, echoed to stderr), --log-file F (log
there instead of the app's log folder; an internal error prints the id of its log line) and
--input-limit KIND=SIZE (raise a limit on what is read: model, dataset, image, trace, table,
settings, bundle, video, decompressed, entries, ratio, pixels, folder; see the README).
knob --version prints the version.
Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage.
`;

/** Options of every command, taken out before the command parses its own. */
function globalOptions(argv: string[]): { args: string[]; verbose: boolean; logFile: string | undefined } {
  const args: string[] = [];
  let verbose = false;
  let logFile: string | undefined;
  const applyLimit = (spec: string | undefined): void => {
    if (spec === undefined || spec.startsWith('--'))
      throw new UsageError('--input-limit needs KIND=SIZE (e.g. model=4G)');
    try {
      applyInputLimits(spec, '--input-limit');
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (arg === '--verbose') verbose = true;
    else if (arg === '--log-file') {
      logFile = argv[++i];
      if (logFile === undefined || logFile.startsWith('--')) throw new UsageError('--log-file needs a file path');
    } else if (arg.startsWith('--log-file=')) logFile = arg.slice('--log-file='.length);
    else if (arg === '--input-limit') applyLimit(argv[++i]);
    else if (arg.startsWith('--input-limit=')) applyLimit(arg.slice('--input-limit='.length));
    else args.push(arg);
  }
  return { args, verbose, logFile };
}

/** --help or -h among a command's options (not after '--', where everything is a value). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function main(argv: string[]): Promise<number> {
  let options: ReturnType<typeof globalOptions>;
  try {
    options = globalOptions(argv);
    const [command, ...rest] = options.args;
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === '--version') {
      process.stdout.write(`${APP_VERSION}\n`);
      return 0;
    }
    if (!Object.hasOwn(COMMANDS, command)) throw new UsageError(`unknown command '${command}'`);
    const name = command as CommandName;
    if (asksForHelp(rest)) {
      const { COMMAND_USAGE, USAGE_FOOTER } = await import('./command-usage');
      process.stdout.write(`Usage:\n${COMMAND_USAGE[name]}${USAGE_FOOTER}`);
      return 0;
    }
    const { runCommand } = await import('./command-runner');
    return await runCommand(name, COMMANDS[name].load, rest, options);
  } catch (error) {
    const { reportFailure } = await import('./command-runner');
    const { silentLog } = await import('../core/logging/logger');
    return reportFailure(error, silentLog());
  }
}
