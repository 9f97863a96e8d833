"""Reference values for Knob Studio's softmax regression (src-shared/calibrators/softmax-regression.ts),
the linear heads of issue 31, computed by scikit-learn's LogisticRegression. Run with Debian's
interpreter and python3-sklearn installed:

    /usr/bin/python3 tools/reference/softmax_regression_sklearn.py > tests/fixtures/reference/heads/sklearn-logistic-regression.json

The inputs are generated here (seeded) and written with the outputs, so the tests read both and
never need Python. Conventions (scikit-learn 1.2): LogisticRegression(penalty='l2', C, solver='lbfgs',
multi_class='multinomial', fit_intercept=True) minimises C sum_i CE_i + ||W||^2 / 2 (the intercepts
not penalised); Knob's objective is that divided by C n (mean CE + lambda ||W||^2 / 2, lambda = 1 / (C n)).
The multinomial intercepts are defined up to a shared constant, so the logits are compared centred
(each row minus its mean), which the softmax does not see.
"""
import json
import sys

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression

rng = np.random.default_rng(20261205)
ROWS, WIDTH, CLASSES = 600, 12, 4

# Class means apart along a few directions, with noise: overlapping classes, so the penalty matters.
means = rng.normal(0, 0.5, size=(CLASSES, WIDTH))
labels = rng.integers(0, CLASSES, size=ROWS)
inputs = means[labels] + rng.normal(0, 1.0, size=(ROWS, WIDTH))

cases = []
for C in [0.05, 1.0, 20.0]:
    model = LogisticRegression(
        penalty="l2", C=C, solver="lbfgs", multi_class="multinomial", fit_intercept=True, tol=1e-12, max_iter=100000
    ).fit(inputs, labels)
    logits = inputs @ model.coef_.T + model.intercept_
    log_p = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) - logits.max(1, keepdims=True)
    mean_ce = float(-log_p[np.arange(ROWS), labels].mean())
    objective = mean_ce + 0.5 / (C * ROWS) * float((model.coef_ ** 2).sum())
    cases.append(
        {
            "C": C,
            "l2": 1.0 / (C * ROWS),
            "objective": objective,
            "meanCrossEntropy": mean_ce,
            "weights": model.coef_.ravel().tolist(),
            "intercept": model.intercept_.tolist(),
            "centredLogits": (logits - logits.mean(1, keepdims=True)).ravel().tolist(),
        }
    )

json.dump(
    {
        "provenance": f"tools/reference/softmax_regression_sklearn.py, scikit-learn {sklearn.__version__}, numpy {np.__version__}",
        "rows": ROWS,
        "width": WIDTH,
        "classes": CLASSES,
        "inputs": inputs.ravel().tolist(),
        "labels": labels.tolist(),
        "cases": cases,
    },
    sys.stdout,
)
