/**
 * The Knob heads' card as Markdown (src-shared/heads/heads-card.ts): every held-out figure of the
 * JSON card in its table, formatted as stated, and "—" for a figure the held-out frames cannot give.
 */
import { describe, expect, it } from 'vitest';
import { headsCardMarkdown, type HeadsCard } from '../../src-shared/heads/heads-card';

const figures = {
  frames: 800,
  accuracyStatic: 0.8575,
  accuracyDynamic: 0.82354,
  accuracyFused: 0.8475,
  eceFused: 0.031249,
  aurocOracleAdvantage: 0.70312,
  meanUClean: 0.634,
  meanUCorrupted: 0.4512,
};
const card: HeadsCard = {
  model: { path: 'm.onnx', sha256: 'ab'.repeat(32) },
  trace: { path: 'run/trace.arrow', sha256: 'cd'.repeat(32), labelledFrames: 4000, featureWidth: 64 },
  seed: 3,
  split: 'seeded random split (seed 3): fitted on 3200 labelled frames, 20 % (800) held out for this card',
  steps: ['static head: ...', 'dynamic head: ...'],
  validation: {
    heads: figures,
    recorded: { ...figures, aurocOracleAdvantage: null, meanUClean: null, contract: 'single-classifier' },
  },
  fitSeconds: 7.66,
};

describe('the heads card in Markdown', () => {
  it('tabulates both rows of held-out figures and names what was fitted on what', () => {
    const lines = headsCardMarkdown(card).split('\n');
    expect(lines).toContain('| fitted heads | 85.75 % | 82.35 % | 84.75 % | 0.0312 | 0.703 | 0.634 | 0.451 |');
    expect(lines).toContain(
      '| the model as recorded (single-classifier) | 85.75 % | 82.35 % | 84.75 % | 0.0312 | — | — | 0.451 |',
    );
    expect(lines).toContain('## Held out (800 frames)');
    expect(lines).toContain(`- classifier: \`m.onnx\` (SHA-256 ${'ab'.repeat(32)})`);
    expect(lines).toContain('- fitted in 7.7 s:');
    expect(lines).toContain('  - dynamic head: ...');
  });
});
