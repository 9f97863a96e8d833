"""The sklearn-curve-10 preset on a two-class input, as scikit-learn computes it: calibration_curve
takes the probability of the positive class (there is no top-label mode). Run with Debian's
interpreter and python3-sklearn:

    /usr/bin/python3 tools/reference/two_class_sklearn_curve.py > tests/fixtures/reference/calibration/two-class-sklearn-curve.json

ECE from the curve: sum over non-empty bins of (n_b / n) |prob_true_b - prob_pred_b|, with n_b the
bin counts calibration_curve uses (np.searchsorted of the inner edges, as in scikit-learn 1.2),
recounted here because the function does not return them. Inputs are generated here (seeded).
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.calibration import calibration_curve

rng = np.random.default_rng(20261201)
n = 600
logits = rng.normal(0.0, 1.5, size=(n, 2))
logits[:, 1] += 0.4
p1 = np.exp(logits[:, 1]) / np.exp(logits).sum(axis=1)
labels = (rng.random(n) < 0.5 + 0.7 * (p1 - 0.5)).astype(int)  # over-confident positive class

prob_true, prob_pred = calibration_curve(labels, p1, n_bins=10, strategy="uniform")
bins = np.linspace(0.0, 1.0, 11)
counts = np.bincount(np.searchsorted(bins[1:-1], p1), minlength=11)
counts = counts[counts != 0]
ece = float(np.sum(counts / n * np.abs(prob_true - prob_pred)))

json.dump(
    {
        "generator": f"tools/reference/two_class_sklearn_curve.py, scikit-learn {sklearn.__version__}",
        "logits": logits.ravel().tolist(),
        "labels": labels.tolist(),
        "probTrue": prob_true.tolist(),
        "probPred": prob_pred.tolist(),
        "ece": ece,
    },
    sys.stdout,
)
sys.stdout.write("\n")
