"""Reference values for Knob Studio's calibrators, computed by scikit-learn (the library whose
definitions they follow). Run with Debian's interpreter and python3-sklearn installed:

    /usr/bin/python3 tools/reference/calibrators_sklearn.py > tests/fixtures/reference/calibrators/sklearn-calibrators.json

The inputs are generated here (seeded) and written with the outputs, so the tests read both and
never need Python. Conventions (scikit-learn 1.2):
- Platt: sklearn.calibration._sigmoid_calibration(F, y) fits P = 1 / (1 + exp(a F + b)) with Platt's
  smoothed targets; with F = logit(score) that is sigmoid(-a logit(s) - b): Knob's (a, b) = (-a, -b).
- Isotonic: IsotonicRegression(out_of_bounds='clip', y_min=0, y_max=1) as CalibratedClassifierCV
  uses it; predictions at new scores.
- One-vs-rest multiclass: per class k an isotonic map of column k of the softmax, then each row
  divided by its sum (uniform where the sum is 0), as _CalibratedClassifier.predict_proba does.
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.calibration import _sigmoid_calibration
from sklearn.isotonic import IsotonicRegression

rng = np.random.default_rng(20261130)


def logit(s):
    s = np.clip(s, 1e-12, 1 - 1e-12)
    return np.log(s) - np.log1p(-s)


# Binary scores: over-confident (true probability is a squashed version of the score).
scores = rng.beta(2.0, 1.2, size=400)
truth = 1 / (1 + np.exp(-0.6 * logit(scores) - 0.3))
outcomes = (rng.random(400) < truth).astype(int)
test_scores = np.linspace(0.01, 0.99, 50)

a, b = _sigmoid_calibration(logit(scores), outcomes)
iso = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(scores, outcomes)

# Multiclass: 4 classes, logits sharpened 2x from the ones the labels were drawn with.
k = 4
logits = rng.normal(size=(300, k)) * 1.5
true_p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
labels = np.array([rng.choice(k, p=row) for row in true_p])
sharp = 2.0 * logits
test_logits = rng.normal(size=(60, k)) * 3.0


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


train_p = softmax(sharp)
test_p = softmax(test_logits)
calibrated = np.zeros_like(test_p)
for c in range(k):
    model = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(train_p[:, c], (labels == c).astype(int))
    calibrated[:, c] = model.predict(test_p[:, c])
sums = calibrated.sum(axis=1, keepdims=True)
calibrated = np.where(sums == 0, 1 / k, calibrated / np.where(sums == 0, 1, sums))

json.dump(
    {
        "provenance": f"tools/reference/calibrators_sklearn.py, scikit-learn {sklearn.__version__}, numpy {np.__version__}",
        "binary": {
            "scores": scores.tolist(),
            "outcomes": outcomes.tolist(),
            "testScores": test_scores.tolist(),
            "platt": {"a": -float(a), "b": -float(b)},
            "isotonicAtTest": iso.predict(test_scores).tolist(),
        },
        "multiclass": {
            "classCount": k,
            "logits": sharp.ravel().tolist(),
            "labels": labels.tolist(),
            "testLogits": test_logits.ravel().tolist(),
            "isotonicOneVsRest": calibrated.ravel().tolist(),
        },
    },
    sys.stdout,
)
sys.stdout.write("\n")
