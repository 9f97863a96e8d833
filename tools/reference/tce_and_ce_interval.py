"""Worked examples for two metrics, computed from the papers' definitions with numpy and scipy
(independently of the TypeScript). Run with Debian's interpreter (python3-scipy):

    /usr/bin/python3 tools/reference/tce_and_ce_interval.py > tests/fixtures/reference/calibration/tce-and-ce-interval.json

1. TCE (Matsubara et al. 2023): samples sorted by score (stable, ties by index); PAVA with bin-size
   constraints (a pool is forced while it has at most n_min samples, allowed while at most n_max and
   the earlier block's rate is >= the later's); the last n_min samples form the final bin, pooled
   into the previous one when the pool fits in n_max. Each prediction of a bin is tested with
   scipy.stats.binomtest(k_b, n_b, p_i) (two-sided); TCE = 100 x rejected (p <= alpha) / n.
2. The debiased l2 calibration error and its asymptotic interval (Sun et al. 2024), equal-width
   bins [lo, hi) with the last closed: U_b = mean over ordered pairs i != j in the bin of r_i r_j
   (r = y - s), computed here by the explicit double sum; T = sum_b (n_b / n) U_b; the variance
   sum_b (n_b/n)^2 [4 (n_b - 2) zeta1 + 2 zeta2] / (n_b (n_b - 1)) with zeta1 = U_b var_b,
   zeta2 = var_b^2 + 2 U_b var_b (the U_b-terms' sum clipped at 0), var_b the unbiased sample
   variance of r in the bin; interval T +- z se clipped at 0, square-rooted.
"""
import json
import sys

import numpy as np
import scipy
from scipy.stats import binomtest, norm

rng = np.random.default_rng(20261201)


def pava_bins(y_sorted, n_min, n_max):
    sizes, sums = [], []
    n = len(y_sorted)
    head = max(0, n - n_min)
    for i in range(head):
        sizes.append(1)
        sums.append(int(y_sorted[i]))
        while len(sizes) > 1:
            w0, w1, y0, y1 = sizes[-2], sizes[-1], sums[-2], sums[-1]
            if not (w0 + w1 <= n_min or (w0 + w1 <= n_max and y0 / w0 >= y1 / w1)):
                break
            sizes[-2] += w1
            sums[-2] += y1
            sizes.pop()
            sums.pop()
    if n > head:
        tail = n - head
        if sizes and sizes[-1] + tail <= n_max:
            sizes[-1] += tail
        else:
            sizes.append(tail)
    return sizes


def tce(scores, outcomes, alpha, n_min, n_max):
    order = np.argsort(scores, kind="stable")
    s, y = scores[order], outcomes[order]
    sizes = pava_bins(y, n_min, n_max)
    rejected, start, per_bin = 0, 0, []
    for size in sizes:
        k = int(y[start : start + size].sum())
        r = sum(binomtest(k, size, p=float(p)).pvalue <= alpha for p in s[start : start + size])
        per_bin.append({"count": size, "positives": k, "rejected": int(r)})
        rejected += r
        start += size
    return 100.0 * rejected / len(scores), per_bin


def ce_interval(scores, outcomes, bins, level):
    edges = np.linspace(0, 1, bins + 1)
    which = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, bins - 1)
    n = len(scores)
    t, linear, quadratic = 0.0, 0.0, 0.0
    for b in range(bins):
        r = (outcomes - scores)[which == b]
        nb = len(r)
        if nb < 2:
            continue
        u = sum(r[i] * r[j] for i in range(nb) for j in range(nb) if i != j) / (nb * (nb - 1))
        var = r.var(ddof=1)
        w = nb / n
        t += w * u
        scale = w * w / (nb * (nb - 1))
        linear += scale * (4 * (nb - 2) + 4) * u * var
        quadratic += scale * 2 * var * var
    se = np.sqrt(max(0.0, linear) + quadratic)
    z = norm.ppf(1 - (1 - level) / 2)
    lo2, hi2 = max(0.0, t - z * se), max(0.0, t + z * se)
    return {"squaredEstimate": t, "squaredStandardError": se, "lo": np.sqrt(lo2), "hi": np.sqrt(hi2)}


examples = []
for name, n, bend in [("over-confident", 600, 0.5), ("calibrated", 250, 1.0), ("small", 37, 0.8)]:
    scores = np.round(rng.uniform(0.05, 0.99, size=n), 3)  # rounded: ties exercise the shared test
    truth = 0.5 + bend * (scores - 0.5)
    outcomes = (rng.random(n) < truth).astype(int)
    cases = []
    for alpha, n_min, n_max in [(0.05, 10, 1000), (0.05, 20, 60), (0.1, 5, 30)]:
        value, per_bin = tce(scores, outcomes, alpha, n_min, n_max)
        cases.append({"alpha": alpha, "minBinSize": n_min, "maxBinSize": n_max, "tce": value, "bins": per_bin})
    examples.append(
        {
            "name": name,
            "scores": scores.tolist(),
            "outcomes": outcomes.tolist(),
            "tce": cases,
            "ceInterval": {"bins": 5, "level": 0.95, **ce_interval(scores, outcomes, 5, 0.95)},
        }
    )

# binomial test p-values on their own, including the exact-tie and degenerate cases
pvalues = []
for k, n, p in [(3, 10, 0.3), (0, 10, 0.3), (10, 10, 0.3), (7, 20, 0.5), (13, 20, 0.5), (0, 5, 0.0),
                (1, 5, 0.0), (5, 5, 1.0), (40, 1000, 0.05), (61, 1000, 0.05), (500, 1000, 0.5), (2, 3, 0.999),
                (1000, 1000, 0.5), (900, 1000, 0.5), (0, 1000, 0.5), (3, 1000, 0.9)]:
    pvalues.append({"k": k, "n": n, "p": p, "pValue": binomtest(k, n, p=p).pvalue})

json.dump(
    {
        "generator": f"tools/reference/tce_and_ce_interval.py, numpy {np.__version__}, scipy {scipy.__version__}",
        "examples": examples,
        "binomialTests": pvalues,
    },
    sys.stdout,
    indent=1,
)
sys.stdout.write("\n")
