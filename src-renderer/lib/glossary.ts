/**
 * The desk's glossary: each term the desk shows that a new operator may not know, defined as the
 * app computes it (the formulas are docs/ARCHITECTURE.md's and src-shared's, cited by file), so a
 * definition here never disagrees with a number on screen. Every entry is reached from the places
 * its term appears (Term.svelte); the glossary's end-to-end test holds that each entry is linked.
 */
export interface GlossaryEntry {
  term: string;
  definition: string;
}

export const GLOSSARY = {
  'u-star': {
    term: 'u* (gate target)',
    definition:
      "The gate's target u*(x) in [0, 1] for each frame: how far the fusion should lean towards the sensitive (dynamic) branch. A Knob model outputs it (a learned safety valve, Knob, arXiv 2602.22702); for an ordinary classifier the adapter derives it from the output's entropy or margin. The gate g moves towards it under the knobs' dynamics.",
  },
  gate: {
    term: 'g (the gate)',
    definition:
      'The fusion weight: z = (1 − g) z_static + g z_dyn, with g read clamped to [0, 1]. Under Knob-ODE g follows u* as a mass on a spring, g″ + 2ζωn g′ + ωn² (g − u*) = 0; Knob-IA sets g = u*, ODE-Lite lags it (src-shared/gate).',
  },
  zeta: {
    term: 'ζ (stability, damping ratio)',
    definition:
      "How much the gate's spring is damped: below 1 the gate overshoots u* and rings, 1 is critically damped, above 1 it creeps. The desk's knob spans 0.05 to 3.",
  },
  wn: {
    term: 'ωn (sensitivity, natural frequency)',
    definition:
      'How fast the gate responds, in rad/s: the settling time of a step is about 4 / (ζ ωn) for ζ < 1. The knob travels logarithmically from 0.1 to 100 rad/s.',
  },
  variant: {
    term: 'variant (Knob-IA, ODE-Lite, Knob-ODE)',
    definition:
      "Knob-IA: g = u* at once, no dynamics. ODE-Lite: a first-order lag (an exponential moving average of u*). Knob-ODE: the second-order spring with ζ and ωn, the paper's gate.",
  },
  mode: {
    term: 'mode (continuous, reset)',
    definition:
      'Continuous: the gate carries its state from frame to frame (a camera or video stream). Reset: each sample is judged on its own, g = g0 + S(τ)(u* − g0), the step response S after the horizon τ.',
  },
  tau: {
    term: 'τ (reset horizon)',
    definition:
      "In reset mode, how long (seconds) the gate is let move from its rest value g0 towards each sample's u* before it is read.",
  },
  g0: {
    term: 'g0 (rest value)',
    definition: 'Where the gate starts: at the start of a stream, and for every sample in reset mode.',
  },
  discretisation: {
    term: 'discretisation (ZOH, Tustin)',
    definition:
      'How the continuous spring becomes per-frame steps. ZOH (zero-order hold, the default) is exact for u* held over each frame interval; Tustin (the bilinear transform) approximates it and is what some deployments run.',
  },
  'T-eff': {
    term: 'T_eff (effective temperature)',
    definition:
      "T_eff = max(m_static, m_dyn) / m_fuse, with m the top-1 minus top-2 logit: how much the fusion softened the sharper branch. Above 1 the fused margin is below the sharper branch's; below 1 (possible with three classes or more) above it; ∞ when the fused margin is 0.",
  },
  CSR: {
    term: 'CSR (confidence shrinkage ratio)',
    definition:
      "CSR = s(m_fuse) / s(max(m_static, m_dyn)), with s the logistic function and m a margin: the fused top-two confidence over the sharper branch's. Below 1: the fusion shrank the confidence.",
  },
  'ece-equal-width': {
    term: 'ECE (equal-width)',
    definition:
      "Expected calibration error of the top label: |accuracy − mean confidence| per bin, weighted by the bin's share of frames, with the bins equal slices of [0, 1] (15 by default; [lo, hi), the last closed).",
  },
  'ece-equal-mass': {
    term: 'ECE (equal-mass)',
    definition:
      'The same error with bins holding equal numbers of frames (adaptive binning): less noisy where confidences crowd near 1.',
  },
  'debiased-ce': {
    term: 'debiased L2-CE',
    definition:
      "The binned L2 calibration error, sqrt(max(0, T)), where T estimates the squared error without the plug-in's bias by a U-statistic within each bin (Sun, Chaudhari, Barnett & Dobriban, 2024), shown with its asymptotic interval: near 0 for a calibrated model where the plug-in ECE stays positive.",
  },
  TCE: {
    term: 'TCE (test-based calibration error)',
    definition:
      "The percentage of predictions that an exact binomial test (at 5 %) finds inconsistent with their bin's share of correct answers, the bins pooled by the paper's PAVA-BC (Matsubara et al., 2023): a percentage, not a gap in confidence.",
  },
  SmoothECE: {
    term: 'SmoothECE',
    definition:
      'The calibration error of a kernel-smoothed reliability curve whose bandwidth σ solves σ = smECE_σ (Błasiok and Nakkiran, 2023): no bins to choose.',
  },
  NLL: {
    term: 'NLL (negative log-likelihood)',
    definition: 'The mean of −log p(true class): punishes a confident mistake hard; 0 for a perfect, certain model.',
  },
  AUROC: {
    term: 'AUROC (confidence against correctness)',
    definition:
      "The probability that a correct prediction has higher confidence than a wrong one: how well the confidence separates the model's right answers from its mistakes (0.5: not at all).",
  },
  'soft-takeover': {
    term: 'soft takeover (pickup)',
    definition:
      'A hardware knob that reports its position moves the value only after it reaches or crosses where the value is, so binding it, or moving the value by another hand, never makes the value jump.',
  },
  conformal: {
    term: 'prediction set (split conformal)',
    definition:
      'The classes whose score is within a threshold q̂ calibrated on earlier labelled frames, so that a set holds the true class on at least 1 − α of the frames on average, if the frames are exchangeable (no drift). LAC keeps the classes with 1 − p_k ≤ q̂ (the smallest sets); APS adds classes in order of probability until their sum passes q̂ (sets that grow where the model is unsure). q̂ is the ⌈(n + 1)(1 − α)⌉-th smallest calibration score (src-shared/calibrators/conformal-prediction.ts).',
  },
} as const satisfies Record<string, GlossaryEntry>;

export type GlossaryId = keyof typeof GLOSSARY;
export const GLOSSARY_IDS = Object.keys(GLOSSARY) as GlossaryId[];
