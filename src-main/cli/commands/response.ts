import { continuousResponseMetrics, discreteResponseMetrics } from '../../../src-shared/gate';
import { frameRateOption, GATE_OPTIONS, gateSettingsFromArgs, parseCommandArgs } from '../cli-args';

/** knob response: step and frequency figures of the gate, continuous and at the frame rate. */
export async function responseCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...GATE_OPTIONS,
    fps: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const settings = await gateSettingsFromArgs(values);
  const fps = frameRateOption(values.fps, 'fps', 30);
  const continuous = continuousResponseMetrics(settings);
  const discrete = discreteResponseMetrics(settings, 1 / fps, 'app');
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ settings, frameRateHz: fps, continuous, discrete }, null, 2)}\n`);
    return 0;
  }
  const f = (v: number | null, digits: number, unit: string): string =>
    v === null ? '—' : v === Infinity ? '∞' : `${v.toFixed(digits)} ${unit}`;
  const peak = (mr: number): string => `${mr.toFixed(4)} x (${(20 * Math.log10(mr)).toFixed(2)} dB)`;
  const lines = [
    `gate ${settings.variant}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s, ${settings.mode} mode; ` +
      `discrete: ${settings.discretization}${settings.discretization === 'tustin' && settings.tustinPrewarp ? ' pre-warped at wn' : ''} at ${fps} fps (app convention)`,
    `                      continuous           discrete`,
    `overshoot             ${f(continuous.overshootPercent, 3, '%').padEnd(20)} ${f(discrete.overshootPercent, 3, '%')}`,
    `rise 10-90 %          ${f(continuous.riseTimeSeconds, 4, 's').padEnd(20)} ${f(discrete.riseTimeSeconds, 4, 's')}`,
    `settling 2 %          ${f(continuous.settlingTimeSeconds, 4, 's').padEnd(20)} ${f(discrete.settlingTimeSeconds, 4, 's')}`,
    `bandwidth -3 dB       ${f(continuous.bandwidthHz, 4, 'Hz').padEnd(20)} ${f(discrete.bandwidthHz, 4, 'Hz')}`,
    `resonant peak Mr      ${peak(continuous.resonantPeak).padEnd(20)} ${peak(discrete.resonantPeak)}`,
    `  at wr               ${f(continuous.resonantFrequencyRadPerSec, 3, 'rad/s').padEnd(20)} ${f(discrete.resonantFrequencyRadPerSec, 3, 'rad/s')}`,
    'Mr = max |G(jw)| (gain, x; in dB: 20 log10 Mr); none at DC means no resonance (wr shown as —).',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
