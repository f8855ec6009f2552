#!/usr/bin/env python3
"""Generate stats/testdata/fixtures.json: reference values for package stats,
computed independently of the Go code with numpy and scipy.

    pip install numpy scipy
    python3 stats/testdata/make_fixtures.py > stats/testdata/fixtures.json

Deterministic: all random samples come from numpy's PCG64 with fixed seeds,
and the bootstrap reference uses a fixed seed too.

What each reference is, and why it matches the Go implementation:

summaries   numpy mean / median / std(ddof=1), scipy.stats.t.interval(0.95)
            for the mean.
utest       scipy.stats.mannwhitneyu(candidate, baseline, two-sided), with
            the method the Go code uses for that input:
              n1+n2 <= 60, no ties   method="exact"
              n1+n2 <= 60, ties      exact conditional permutation test,
                                     method=PermutationMethod(n_resamples=inf)
                                     (exhaustive; kept to n1+n2 <= 20 here
                                     because enumeration is expensive)
              n1+n2 > 60             method="asymptotic" (tie and continuity
                                     correction)
            scipy's method="exact" ignores ties, so it is not used with ties.
ratio_ci    Fieller-Welch interval for mean(candidate)/mean(baseline) at 95 %,
            found by inverting the Welch t statistic numerically with
            scipy.optimize.brentq (not by the closed-form quadratic the Go code
            uses), with t from scipy.stats.t.ppf on the Welch-Satterthwaite df
            at the point estimate.
bca         scipy.stats.bootstrap BCa interval of the ratio of means, only for
            n >= 20 per cell, as a loose cross-check of a different method.
"""

import json
import math
import sys

import numpy as np
from scipy import optimize, stats

CONF = 0.95
EXACT_LIMIT = 60  # stats.UTestExactLimit


def summary(xs):
    xs = np.asarray(xs, dtype=float)
    n = len(xs)
    mean = float(np.mean(xs))
    sd = float(np.std(xs, ddof=1))
    if sd == 0:
        lo = hi = mean
    else:
        lo, hi = stats.t.interval(CONF, n - 1, loc=mean, scale=sd / math.sqrt(n))
    return {
        "n": n,
        "mean": mean,
        "median": float(np.median(xs)),
        "sd": sd,
        "cov": sd / mean,
        "min": float(np.min(xs)),
        "max": float(np.max(xs)),
        "ci95": [float(lo), float(hi)],
    }


def utest(cand, base):
    has_ties = len(np.unique(np.concatenate([cand, base]))) < len(cand) + len(base)
    n = len(cand) + len(base)
    if n > EXACT_LIMIT:
        method, m = "normal", "asymptotic"
    elif not has_ties:
        method, m = "exact", "exact"
    else:
        assert n <= 20, "exhaustive permutation test too expensive"
        method, m = "exact", stats.PermutationMethod(n_resamples=np.inf)
    r = stats.mannwhitneyu(cand, base, alternative="two-sided", method=m)
    return {"u": float(r.statistic), "p": float(r.pvalue), "method": method}


def fieller(base, cand):
    nb, nc = len(base), len(cand)
    xb, xc = np.mean(base), np.mean(cand)
    vb = np.var(base, ddof=1) / nb
    vc = np.var(cand, ddof=1) / nc
    theta = xc / xb
    v1, v2 = vc, theta * theta * vb
    df = (v1 + v2) ** 2 / (v1 * v1 / (nc - 1) + v2 * v2 / (nb - 1))
    t = stats.t.ppf(1 - (1 - CONF) / 2, df)
    if xb * xb / vb <= t * t:
        return None  # unbounded

    def g(th):  # Welch t statistic of xc - th*xb; decreasing through theta
        return (xc - th * xb) / math.sqrt(vc + th * th * vb)

    def bracket(sign):
        step = abs(theta) * 0.01 + 1e-12
        while (g(theta + sign * step) - (-sign * t)) * sign > 0:
            step *= 2
        return theta + sign * step

    lo = optimize.brentq(lambda th: g(th) - t, bracket(-1), theta, xtol=1e-14, rtol=1e-15)
    hi = optimize.brentq(lambda th: g(th) + t, theta, bracket(+1), xtol=1e-14, rtol=1e-15)
    return [float(lo), float(hi)]


def bca(base, cand):
    if min(len(base), len(cand)) < 20:
        return None
    res = stats.bootstrap(
        (np.asarray(cand), np.asarray(base)),
        lambda c, b, axis: np.mean(c, axis=axis) / np.mean(b, axis=axis),
        vectorized=True, paired=False, confidence_level=CONF, method="BCa",
        n_resamples=20000, rng=np.random.default_rng(20240917),
    )
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


def normal(rng, mean, sd, n, decimals=None):
    xs = rng.normal(mean, sd, n)
    return np.round(xs, decimals) if decimals is not None else xs


def main():
    rng = np.random.default_rng(7)
    sets = {
        "n3": normal(rng, 1000, 30, 3),
        "n4_even_median": normal(rng, 52000, 900, 4),
        "n5": normal(rng, 950, 30, 5),
        "n10_skewed": rng.lognormal(8, 0.5, 10),
        "n30": normal(rng, 12.5, 0.4, 30),
        "ties_n8": np.array([5, 5, 6, 7, 7, 7, 9, 10], dtype=float),
        "zero_variance_n4": np.array([42.0, 42.0, 42.0, 42.0]),
        "n2": np.array([1.0, 3.0]),
    }
    pairs = [
        # name, baseline, candidate
        ("3v3_separated", [1000.0, 1010.0, 990.0], [950.0, 955.0, 940.0]),
        ("4v4_separated", [100.0, 101.0, 102.0, 103.0], [90.0, 91.0, 92.0, 93.0]),
        ("5v5_normal", normal(rng, 1000, 30, 5), normal(rng, 950, 30, 5)),
        ("5v7_unequal_sd", normal(rng, 1000, 10, 5), normal(rng, 990, 60, 7)),
        ("10v10_overlap", normal(rng, 500, 25, 10), normal(rng, 505, 25, 10)),
        ("30v30_exact", normal(rng, 20000, 800, 30), normal(rng, 19400, 800, 30)),
        ("8v8_ties", normal(rng, 100, 3, 8, 0), normal(rng, 104, 3, 8, 0)),
        ("6v9_ties", normal(rng, 50, 2, 6, 0), normal(rng, 51, 2, 9, 0)),
        ("3v3_ties", [10.0, 11.0, 11.0], [11.0, 12.0, 13.0]),
        ("10v10_heavy_ties", normal(rng, 20, 1, 10, 0), normal(rng, 21, 1, 10, 0)),
        ("31v31_normal_approx", normal(rng, 300, 12, 31), normal(rng, 306, 12, 31)),
        ("35v40_ties_normal_approx", normal(rng, 200, 5, 35, 0), normal(rng, 202, 5, 40, 0)),
        ("4v4_noisy_baseline_near_zero", [1.0, 30.0, -25.0, 2.0], [5.0, 6.0, 7.0, 8.0]),
    ]
    out = {
        "generator": "stats/testdata/make_fixtures.py",
        "numpy": np.__version__,
        "scipy": __import__("scipy").__version__,
        "confidence": CONF,
        "summaries": [{"name": k, "xs": [float(x) for x in v], **summary(v)} for k, v in sets.items()],
        "comparisons": [],
    }
    for name, base, cand in pairs:
        base, cand = np.asarray(base, dtype=float), np.asarray(cand, dtype=float)
        out["comparisons"].append({
            "name": name,
            "baseline": [float(x) for x in base],
            "candidate": [float(x) for x in cand],
            "ratio": float(np.mean(cand) / np.mean(base)),
            "ratio_ci": fieller(base, cand),
            "bca": bca(base, cand),
            "utest": utest(cand, base),
        })
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
