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

const percent = (v: number | null) => (v === null ? '—' : `${(100 * v).toFixed(2)} %`);
const decimals = (digits: number) => (v: number | null) => (v === null ? '—' : v.toFixed(digits));

/** The card's held-out figures, in its order: name, how a column's figure is read, how it shows. */
export const HEADS_CARD_FIGURES: ReadonlyArray<
  readonly [string, (f: BranchFigures) => number | null, (v: number | null) => string]
> = [
  ['static accuracy', (f) => f.accuracyStatic, percent],
  ['dynamic accuracy', (f) => f.accuracyDynamic, percent],
  ['fused accuracy', (f) => f.accuracyFused, percent],
  ['fused ECE', (f) => f.eceFused, decimals(4)],
  ['AUROC of u*', (f) => f.aurocOracleAdvantage, decimals(3)],
  ['mean u* clean', (f) => f.meanUClean, decimals(3)],
  ['mean u* corrupted', (f) => f.meanUCorrupted, decimals(3)],
];

/** The card as Markdown: provenance, the fit's steps, and one table of the held-out figures. */
export function headsCardMarkdown(card: HeadsCard): string {
  const row = (name: string, f: BranchFigures) =>
    `| ${name} | ${HEADS_CARD_FIGURES.map(([, read, show]) => show(read(f))).join(' | ')} |`;
  const { heads, recorded } = card.validation;
  return [
    '# Knob heads: model card',
    '',
    `- classifier: \`${card.model.path}\` (SHA-256 ${card.model.sha256})`,
    `- features recorded in: \`${card.trace.path}\` (SHA-256 ${card.trace.sha256}: of the file, or of the file list for a folder or images with their labels file; ${card.trace.labelledFrames} labelled frames, ${card.trace.featureWidth} features a frame)`,
    `- split: ${card.split}`,
    `- fitted in ${card.fitSeconds.toFixed(1)} s:`,
    ...card.steps.map((step) => `  - ${step}`),
    '',
    `## Held out (${heads.frames} frames)`,
    '',
    `| | ${HEADS_CARD_FIGURES.map(([name]) => name).join(' | ')} |`,
    `|---|${HEADS_CARD_FIGURES.map(() => '---:').join('|')}|`,
    row('fitted heads', heads),
    row(`the model as recorded (${recorded.contract})`, recorded),
    '',
    'Fused at g = u* (the gate at rest on its target). ECE: top-label, 15 equal-width bins, L1. AUROC of u* for the oracle advantage: how well u* ranks the frames where the dynamic branch has the lower cross-entropy, CE(z_dyn) < CE(z_static); "—" where every held-out frame falls on one side. Mean u* over the clean (severity 0) and the corrupted held-out frames.',
    '',
  ].join('\n');
}
