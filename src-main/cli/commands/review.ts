import { DEFAULT_INTERVAL_DRAWS } from '../../../src-shared/review';
import { queueReview, type QueueReviewResult } from '../../core/use-cases/queue-review';
import { frameRangeOption, GATE_OPTIONS, numberInRange, parseCommandArgs, seedOption } from '../cli-args';
import { runOverTrace } from '../trace-command';
import { UsageError } from '../usage-error';

function reportLines(r: QueueReviewResult, trace: string): string[] {
  return [
    `review queue of ${trace}: window ${r.windowStart}:${r.windowEnd}, ${r.labelledFrames} labelled of ${r.windowEnd - r.windowStart} frames`,
    ...(r.approximation === undefined ? [] : [r.approximation]),
    `${r.identity}: ${r.ece.value === null ? 'no labels yet, the prior allows' : r.ece.value.toFixed(4)} [${r.ece.low.toFixed(4)}, ${r.ece.high.toFixed(4)}]`,
    r.queue.length === 0
      ? 'every frame of the window is labelled: nothing to queue'
      : 'label next (frame, stream time, confidence, why, expected narrowing of the interval half-width):',
    ...r.queue.map(
      (q) =>
        `  ${q.frame}\t${q.seconds.toFixed(2)} s\t${q.confidence.toFixed(3)}\t${q.reason}\t-${q.narrowing.toFixed(4)}`,
    ),
  ];
}

/** knob review TRACE: the frames to label next to narrow a window's calibration error interval most. */
export async function reviewCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      window: { type: 'string' },
      count: { type: 'string' },
      draws: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob review takes one trace file');
  const window = frameRangeOption(values.window, 'window');
  const count = numberInRange(values.count, 'count', 20, { min: 1, max: 10_000, integer: true });
  const draws = numberInRange(values.draws, 'draws', DEFAULT_INTERVAL_DRAWS, { min: 100, max: 100_000, integer: true });
  const seed = seedOption(values.seed);
  return runOverTrace(
    'review',
    values,
    positionals[0]!,
    'choosing the frames',
    (trace, settings) => queueReview({ trace, settings, window, count, draws, seed }),
    (result) => reportLines(result, positionals[0]!),
  );
}
