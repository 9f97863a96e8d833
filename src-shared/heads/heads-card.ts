import type { BranchFigures } from './knob-heads';

/**
 * The card of Knob heads fitted on a user's classifier (`knob fit-heads`, issue 31): what was
 * fitted on what, and the held-out figures of the heads beside the model as it recorded the trace.
 * Written as NEW.card.json and, for people, NEW.card.md (headsCardMarkdown), which the command
 * also prints.
 */
export interface HeadsCard {
  model: { path: string; sha256: string };
  trace: { path: string; sha256: string; labelledFrames: number; featureWidth: number };
  seed: number;
  split: string;
  steps: string[];
  /** On the held-out frames: the fitted heads, and the model as recorded (its contract named). */
  validation: { heads: BranchFigures; recorded: BranchFigures & { contract: string } };
  fitSeconds: number;
}

const percent = (v: number) => `${(100 * v).toFixed(2)} %`;
const decimals = (v: number | null, digits: number) => (v === null ? '—' : v.toFixed(digits));

/** The card as Markdown: provenance, the fit's steps, and one table of the held-out figures. */
export function headsCardMarkdown(card: HeadsCard): string {
  const row = (name: string, f: BranchFigures) =>
    `| ${name} | ${percent(f.accuracyStatic)} | ${percent(f.accuracyDynamic)} | ${percent(f.accuracyFused)} | ${f.eceFused.toFixed(4)} | ${decimals(f.aurocOracleAdvantage, 3)} | ${decimals(f.meanUClean, 3)} | ${decimals(f.meanUCorrupted, 3)} |`;
  const { heads, recorded } = card.validation;
  return [
    '# Knob heads: model card',
    '',
    `- classifier: \`${card.model.path}\` (SHA-256 ${card.model.sha256})`,
    `- features recorded in: \`${card.trace.path}\` (SHA-256 ${card.trace.sha256}; ${card.trace.labelledFrames} labelled frames, ${card.trace.featureWidth} features a frame)`,
    `- split: ${card.split}`,
    `- fitted in ${card.fitSeconds.toFixed(1)} s:`,
    ...card.steps.map((step) => `  - ${step}`),
    '',
    `## Held out (${heads.frames} frames)`,
    '',
    '| | static accuracy | dynamic accuracy | fused accuracy | fused ECE | AUROC of u* | mean u* clean | mean u* corrupted |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('fitted heads', heads),
    row(`the model as recorded (${recorded.contract})`, recorded),
    '',
    'Fused at g = u* (the gate at rest on its target). ECE: top-label, 15 equal-width bins, L1. AUROC of u* for the oracle advantage: how well u* ranks the frames where the dynamic branch has the lower cross-entropy, CE(z_dyn) < CE(z_static); "—" where every held-out frame falls on one side. Mean u* over the clean (severity 0) and the corrupted held-out frames.',
    '',
  ].join('\n');
}
