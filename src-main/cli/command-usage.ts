import { CORRUPTION_NAMES } from '../../src-shared/corruptions';
import { DEFAULT_GATE_SETTINGS, GATE_DISCRETIZATIONS, GATE_VARIANTS } from '../../src-shared/gate';
import { EVERY_CLASS_MAX_CLASSES, PRESET_NAMES } from '../../src-shared/metrics/metric-suite';
import { CALIBRATION_METHODS } from '../../src-shared/calibrators';
import { TUNING_METRICS } from '../../src-shared/tuning';
import { DRIFT_DETECTORS, FRAME_SIGNAL_NAMES } from '../../src-shared/drift';
import { METRIC_GROUPINGS } from '../../src-shared/api/metrics-schemas';
import { GATE_USAGE, SCHEDULE_USAGE } from './cli-args';
import { SOURCE_USAGE } from './source-args';
import { MODEL_USAGE } from './model-args';
import { SCORES_INPUT_USAGE } from './scores-input';
import { BATCH_MEMORY_BUDGET_BYTES } from '../core/inference/batch-size';
import type { CommandName } from './knob';

/**
 * Each command's full usage, printed by `knob COMMAND --help`. It names the values each option
 * takes from the lists the code checks them against (corruptions, presets, calibrators, metrics),
 * so it is loaded only for a command's help: `knob --help` starts without those modules.
 */
export const COMMAND_USAGE: Record<CommandName, string> = {
  run: `  knob run ${MODEL_USAGE}
           ${SOURCE_USAGE} --out DIR
           ${SCHEDULE_USAGE}
           ${GATE_USAGE}
           [--label-file FILE.csv|FILE.json] [--frame-rate HZ] [--batch N] [--limit N] [--record-features]
           [--keep N] [--intervals] [--json]
      Runs the model over the source once and writes DIR/trace.arrow (Arrow IPC, readable by
      pandas.read_feather), DIR/metrics.json, DIR/report.html and its figures (SVG and PNG).
      Sources: the embedded Fashion-MNIST test set, IDX files, .npz or a folder with
      images.npy/labels.npy, an ImageFolder (class = folder name), a folder with manifest.csv
      (path,label for class names, or path,label_index for class indices), a folder of PNG/JPEG
      images, or a video file (decoded by ffmpeg on PATH). Class names are matched to the model's
      labels by name (case, spaces, _ and - folded); a name the model does not know is an error
      unless --class-map FILE maps it ('folder -> model label' lines, or a JSON object). A model
      without label metadata takes the folders in sorted order, and the run says so.
      --label-file FILE labels the frames the source left unlabelled (a video, a plain folder): CSV or
      JSON rows keyed by frame (frame, or start_frame,end_frame) or time in seconds (time, or
      start_time,end_time), with a label (a class name) or label_index column; a frame the source
      labelled is never replaced. The trace keeps which labels were imported.
      --intervals prints the headline figures with 95 % bootstrap intervals (metrics.json always has them).
      --record-features keeps the model's 'features' output in the trace (for the dac and procal
      calibrators; about 0.8 KB a frame for the shipped model).
      --keep N records a kept-class trace as the frames arrive (what knob compact --keep N makes of a
      full one, the same values), its logits 10 N + 40 bytes a frame whatever the class count;
      metrics.json and the report give each metric with how far the full trace's can lie (the
      figures knob metrics --trace gives). Not with --label-file
      (an imported label would not be among a frame's kept classes) or a calibrator.
      The batch is chosen from the model's input size within ${BATCH_MEMORY_BUDGET_BYTES / 2 ** 20} MiB (256 frames of
      28x28, 22 of 224x224x3; the run says which) unless --batch N. Ctrl-C stops the run between
      batches and keeps the frames computed.
`,
  replay: `  knob replay TRACE.arrow --out DIR ${GATE_USAGE} [--intervals] [--json]
      The same outputs from a recorded trace with any settings (default: the recorded ones), no model.
`,
  compact: `  knob compact TRACE.arrow --out KEPT.arrow [--keep N] [--json]
      Rewrites a trace with only each frame's N leading classes (default 32): its label and the
      classes that lead either branch, with the log-sum-exp, maximum and slope of the rest of each
      branch (10 N + 40 bytes a frame where every class costs 8 K). knob metrics --trace and knob
      replay read it: each metric of the fused output and the branches comes with how far the full
      trace's value can lie from it (accuracy, NLL, Brier, every binned metric, AUROC, AURC,
      E-AURC, the KS, Kuiper and Spiegelhalter tests; SmoothECE and TCE say they have no stated
      bound). Everything that needs every class (the desk, tune, calibrate, analyze,
      export) refuses it. N is at least 2.
`,
  metrics: `  knob metrics ${SCORES_INPUT_USAGE} [${GATE_USAGE}]
               [--preset ${PRESET_NAMES.join('|')}]... [--bins N --binning equal-width|equal-mass
               --edges left-closed|right-closed|one-in-extra-bin --mass-edges midpoint|quantile] [--mmce]
               [--tce] [--every-class] [--intervals] [--json]
      Every calibration metric with its identity (default: 15 equal-width and 15 equal-mass bins
      plus every preset). Files: .npy, .npz (arrays 'logits'/'probabilities' and 'labels'), .json, .csv.
      A trace gives the fused output (replayed at the recorded or given settings) and each branch;
      with more than ${EVERY_CLASS_MAX_CLASSES} classes each frame is scored on its own (memory that does not grow
      with K) and the classwise metrics, which read every class of every frame, are marked not
      computed: --every-class computes them.
      TCE (Matsubara et al. 2023) is included up to 100,000 samples; --tce includes it above.
      --intervals adds accuracy, NLL, Brier and ECE with 95 % percentile-bootstrap intervals, and the
      debiased L2-CE (U-statistic) with its asymptotic interval (Sun et al. 2024) and its bootstrap one.
`,
  calibrate: `  knob calibrate ${SCORES_INPUT_USAGE} --method ${CALIBRATION_METHODS.join('|')}|all
               [--branch fused|static|dynamic] [--split time|random|kfold|none] [--evaluate-fraction F]
               [--folds K] [--seed S] [--condition-by COLUMN[,COLUMN]] [--condition-hysteresis FRAMES]
               [--out knob-settings.json] [--json]
      Fits calibrators of the model's output on the labelled frames and compares them on held-out
      frames (default: time-ordered, fit on the first 70 %, evaluate on the last 30 %; --split none
      fits and evaluates on everything, as other tools do): accuracy, NLL, Brier, ECE (equal-width
      and equal-mass), classwise ECE and SmoothECE with 95 % bootstrap intervals, before and after,
      and how often the top-1 class changes. --out writes the gate settings and the fitted
      calibrator (the best by held-out NLL with --method all) for the desk and knob run.
      conditional fits a temperature per condition and a detector of the condition from the
      features (a trace recorded with --record-features); a frame's condition is the value of its
      metadata columns named by --condition-by (default corruption; e.g. corruption,severity).
      Over a stream it applies another condition once that one is detected on --condition-hysteresis
      consecutive frames (default 5; 1: every frame its own detected condition).
`,
  export: `  knob export --trace T.arrow ${MODEL_USAGE}
               [${GATE_USAGE}] [--exclude-model] --out NAME.knob.zip [--json]
      The tuned-calibrator bundle of a recording: manifest.json (with its JSON Schema), the model
      (unless --exclude-model; its SHA-256 either way), report/ of the run, and deploy/: the ONNX
      step graph (preprocessing, contract, gate, fusion and calibrator in one standard ONNX model)
      and a Triton model repository for it, with a README. Settings: the trace's unless given.
`,
  verify: `  knob verify NAME.knob.zip [--model M [--second-model M2]] [--json]
      Checks a bundle: hostile-archive checks, schema and format version, every member's SHA-256,
      the model's hash against the given file, and the step graph against the app on 24 frames of
      the embedded stream (within 1e-5). Exit 0 when sound, 1 with the reason.
`,
  table: `  knob table ${MODEL_USAGE}
             [--images-per-condition N] [--corruptions A,B,...] [--intervals] [--out-md F] [--out-json F] [--json]
      Paper Table 2 on Fashion-MNIST-C in reset mode: Static, Dynamic, Knob-IA, ODE-Lite, Knob-ODE.
      The default corruptions are those the model's input can take (no colour ones on grayscale).
`,
  bench: `  knob bench ${MODEL_USAGE} [--source default|DATASET|FOLDER|VIDEO]
             [--batch N] [--frames N] [--rounds N] [--live-seconds S] [--live-fps F] [--json]
      Bare onnxruntime-node vs the engine, gate + fusion cost, live path latency, on any model
      and source (frames fitted to the model's input). The batch is chosen from the model's input
      size within ${BATCH_MEMORY_BUDGET_BYTES / 2 ** 20} MiB unless --batch N; each measurement
      streams about 2 s of bare inference (at most 10,240 frames) unless --frames N.
`,
  response: `  knob response ${GATE_USAGE} [--fps F] [--json]
      Step and frequency figures of the gate: continuous, and discrete at the frame rate.
`,
  corrupt: `  knob corrupt --input IDX --corruption NAME --severity 1..5 [--seed S] [--offset N] [--limit N]
               (--out FILE.idx[.gz] | --out-dir DIR --format png) [--json]
      Writes a corrupted copy of an IDX image set. Corruptions: ${CORRUPTION_NAMES.join(', ')}.
`,
  probe: `  knob probe step|bode ${MODEL_USAGE}
             [--source default|DATASET|FOLDER|VIDEO [--class-map FILE]] [--corrupt NAME] [--frame-rate HZ] [--seed S]
             step: [--realisations R] [--frames-per-level N] [--low S] [--high S]
             bode: [--frequencies N] [--mean S] [--amplitude A]
             ${GATE_USAGE} [--out DIR] [--json]
      Measures how the gate really behaves on the model and the source (default: the embedded
      test set, shot noise). step: R = 32 realisations of severity 1 -> 5 -> 1 (300 frames each,
      one model pass each); the mean response normalised by the mean u* step, its 95 % simultaneous
      bootstrap band, rise time, 2 % settling time and overshoot measured against the discrete and
      continuous predictions of the knobs, and (zeta, wn) identified from the recorded (u*, g).
      bode: sinusoidal severity at 8 log-spaced frequencies up to a third of the frame rate, whole
      periods, transient discarded; lock-in magnitude and phase with batch-means standard errors
      against the discrete theory, with a harmonic-distortion flag where clipping made g non-linear.
      --out writes report.html with the figure (SVG and PNG beside it).
`,
  analyze: `  knob analyze TRACE.arrow [${GATE_USAGE}] [--permutations N] [--seed S] [--out DIR] [--json]
      The paper's analyses on a trace: T_eff and CSR by severity with Spearman's rho, every frame
      with T_eff < 1 and why (for K >= 3 it is not a theorem); reliability and ECE where the
      branches agree and where they disagree; the AUROC of u* and of g for the oracle advantage;
      the polarisation index E|g - 0.5|; the gate-conditional calibration test.
`,
  monitor: `  knob monitor TRACE.arrow [--reference START:END] [--false-alarm-hours H]
            [--signals ${FRAME_SIGNAL_NAMES.join(',')}] [--detectors ${DRIFT_DETECTORS.join(',')}]
            [--window-frames N] [--stride-frames N] [--bins B] [--seed S] [${GATE_USAGE}] [--json]
      Drift alarms on what every frame has, labelled or not: each signal (default confidence and
      gate-target) through a two-sided CUSUM and a windowed KS test against the reference window
      (frames START to END, default the first 20 %), each threshold calibrated on the reference by
      simulation (a Gaussian-copula autoregression fitted to it, the detector refitted on a
      simulated reference each path) so that the monitor as a whole raises at most one false alarm
      in H hours of unshifted stream (default 1; each of m signals is held to m x H, its detectors
      calibrated as one alarm that restarts them all; a target that would take over 1.5e9
      simulated frames is refused). The window defaults to
      10 s of frames, tested every second. Prints each threshold, how it was calibrated, and the
      first 20 alarms with their frame and stream time (--json: every one).
`,
  conformal: `  knob conformal TRACE.arrow [--alpha A] [--score lac|aps] [--group-by ${METRIC_GROUPINGS.join('|')}]
            [--calibration-share S] [--last N] [${GATE_USAGE}] [--json]
      Split-conformal prediction sets of the output (fused at the knobs, then the --settings
      calibrator), as the desk's Prediction sets panel: the threshold q_hat calibrated on the first
      S (default 0.5) of the labelled frames (of the last N frames, default all), the sets judged on
      the rest: coverage with its Wilson 95 % interval, mean set size, empty and one-class shares,
      overall and per group, and the set sizes. LAC (default, score 1 - p_y) or APS (not
      randomised); alpha the miss rate (default 0.1). The guarantee is marginal and assumes the
      calibration and judged frames exchangeable: a group whose interval lies below 1 - alpha is marked.
`,
  estimate: `  knob estimate TRACE.arrow [--reference START:END] [--reference-trace LABELLED.arrow]
            [--by severity|window] [--window-frames N] [--replicates N] [--seed S] [${GATE_USAGE}] [--json]
      Accuracy without labels: mean confidence, ATC-MC (Garg et al. 2022), DoC (Guillory et al.
      2021) and the mean of the confidence calibrated on the reference (isotonic), each fitted on the
      labelled frames of the reference window (default the first 20 %) and applied to each severity
      (or each window, default a minute) after it without reading its labels, with 95 % moving-block
      bootstrap intervals. Where the frames have labels, each group's true accuracy is shown too,
      with each method's mean absolute error and how often its interval covers the truth.
      --reference-trace fits on another recording of the same model (its frames START:END, default
      all; refused if recorded with another model) and estimates every frame of TRACE: a recording
      with no labels at all.
`,
  timeline: `  knob timeline TRACE.arrow [--window-frames N] [--stride-frames N] [--replicates N] [--seed S] [${GATE_USAGE}] [--json]
      Calibration over time of a labelled (or partly labelled) recording: accuracy, ECE (15
      equal-width bins, L1), NLL and Brier over windows (default a minute of frames, one after
      another; --stride-frames below the window slides them), each on the window's labelled frames
      with a 95 % moving-block bootstrap interval, and the change points of accuracy (binary
      segmentation, each split tested against moving-block resamples of its segment).
`,
  review: `  knob review TRACE.arrow [--window START:END] [--count N] [--draws N] [--seed S] [${GATE_USAGE}] [--json]
      The review queue: the window's (default the last 2,000 frames) stratified ECE with a 95 %
      interval (bin weights from every frame, accuracies from the labelled ones at each bin's
      Jeffreys posterior), and the N frames (default 20) whose labels would narrow that interval
      most, each with its stream time, why it was chosen (a bin with no label, an uncertain
      crowded bin, the branches disagreeing, u* moving) and the expected narrowing.
`,
  tune: `  knob tune TRACE.arrow [--metric ${TUNING_METRICS.join('|')}]
            [--max-settling S] [--max-overshoot PERCENT] [--min-bandwidth HZ]
            [--split time|random|none] [--evaluate-fraction F] [--search-on fit|held-out] [--seed S]
            [--zeta-range MIN:MAX:N] [--wn-range MIN:MAX:N] [--variants A,B] [--modes A,B] [--taus S,S]
            [--temperatures T,T] [--coarse-only] [--every-frame] [--threads N] [--replicates N]
            [${GATE_USAGE}: the current setting] [--out DIR] [--json]
      Tunes the knobs on a recorded trace by replay (the model does not run): minimises the chosen
      metric on the first 70 % of the labelled frames (time-ordered; --split random|none), over a zeta x wn
      grid (20 x 20, log-spaced) then a local refinement, subject to the constraints on the
      discrete gate's 2 % settling time, overshoot and bandwidth, and judges the choice on the
      held-out last 30 %: the best setting and its improvement over the current one (the trace's
      settings, or those given) there, with a 95 % paired bootstrap interval and a verdict, and the
      timing. --search-on held-out minimises on the held-out frames themselves (the interval is
      then flattered by the choice, and the output says so). Above 200,000 search frames (about
      2.6 hours at 30 fps) the grid and refinement score an even stride of about 50,000 of them,
      and the best 12 settings found are scored again on every search frame, the best of those
      chosen; --every-frame scores every search frame at every setting. --out writes report.html
      (heat map with the constraint boundary, Pareto front), tuning.json and knob-settings.json (the best).
`,
  features: `  knob features --model M --out NEW.onnx [--node TENSOR] [--json]   |   knob features --model M --list [--json]
      Writes the classifier with its penultimate activation as a second output, 'features': the
      input of the final Gemm, or MatMul (+ Add), that makes its logits (the output named logits,
      or its only one), or the tensor --node names. Runs it once on a blank image to check that
      the tensor is a [1, F] float row and that the final layer maps it to the logits (within 1e-4).
      The app then records the features of that model (--record-features, the Source panel), for
      dac, procal, conditional and the feature-shift and feature-mmd drift signals. --list prints the final layer
      found (or why none) and every tensor of the graph with its operator and declared shape.
`,
  'fit-heads': `  knob fit-heads --model M --data D [--features NODE] --out NEW.onnx [--seed S] [--json]
  knob fit-heads --model M --trace T.arrow --out NEW.onnx [--seed S] [--json]
      Makes any classifier a Knob model. With --data, labelled images (an ImageFolder, a CSV
      manifest, .npz or IDX; at least 2,000; class names matched to the model's labels by name):
      the classifier's penultimate activation is exposed as 'features' (or --features NODE, or the
      model's own 'features' output), and the images run through it once, each under one of the
      eight training corruptions at a severity from 0 (clean) to 5 (the model options of knob run
      apply). With --trace, the features a classifier with a 'features' output (knob features)
      recorded in T (knob run --model M --record-features over labelled images with a corruption
      schedule that leaves clean segments). Fitted on them: a static head (softmax regression,
      label smoothing 0.1, on the corrupted frames), a dynamic head (distilled from the model's
      recorded dynamic branch, its softmax at temperature 0.6, on every frame), and the u* network
      (16 ReLU units on the standardised features and, with --data, seven image statistics computed
      in the graph from the image: mean, deviation, Laplacian, total variation, dark and bright
      fractions) with the static scale, trained on the fused loss
      and the oracle-advantage target as tools/train/train_knob.py does; a seeded 80 % of the
      labelled frames fit, 20 % are held out. Writes the Knob-native model (the graph unchanged, the heads added,
      the logits output dropped) and NEW.card.json: held-out accuracy of each branch and fused,
      ECE, AUROC of u* for the oracle advantage and mean u* clean and corrupted, for the heads and
      for the model as it recorded them.
`,
  'model-card': `  knob model-card [--model FILE] [--images-per-condition N] [--out-dir DIR] [--json]
      Regenerates the model card of a Knob-native model on the embedded test set, its claims with
      95 % bootstrap intervals. --out-dir is created if needed and checked before the long work.
`,
};

export const USAGE_FOOTER = `
Defaults: zeta ${DEFAULT_GATE_SETTINGS.zeta}, wn ${DEFAULT_GATE_SETTINGS.wnRadPerSec} rad/s, variant second-order (${GATE_VARIANTS.join(' | ')}),
discretization zoh (${GATE_DISCRETIZATIONS.join(' | ')}), mode continuous; --model default is the shipped model.
--settings F starts from the gate settings the desk exported (the file, or the export folder);
gate options given with it override them. Negative numbers are values (--g0 -0 or --zeta -1 reach the range check, which names the range).
Every command also takes --help, --verbose (debug logging, echoed to stderr), --log-file F (log
there instead of the app's log folder; an internal error prints the id of its log line) and
--input-limit KIND=SIZE (raise a limit on what is read: model, dataset, image, trace, table,
settings, bundle, video, decompressed, entries, ratio, pixels, folder; see the README).
Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage.
`;
