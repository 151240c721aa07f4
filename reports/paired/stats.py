"""The statistics of a paired comparison, written out (no scipy at run time; the tests check each against scipy).

Binary outcomes: McNemar's exact test (a two-sided binomial test on the discordant pairs) and Newcombe's interval for
a difference of paired proportions (his method 10: Wilson score limits of each rate, combined with the phi
correlation of the 2x2 table; Newcombe 1998, Statistics in Medicine 17:2635). Continuous values: the paired
bootstrap of the mean difference (percentile interval, a fixed seed) and the Wilcoxon signed-rank test (exact up to
50 differences without ties or zeros, exact conditional on the ties up to 13, else the normal approximation with the
tie correction: scipy's default method).
Several metrics at once: Holm's step-down correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054
"""The standard normal's 97.5 % quantile."""
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20240601
"""The bootstrap's seed, printed with every interval it makes: the same runs give the same intervals."""
_CHUNK = 200
"""Resamples drawn at once: 200 x 10,000 pairs is 16 MB of indexes, whatever the number of resamples."""
EXACT_WILCOXON_MAX = 50
"""Up to this many differences without ties or zeros, the signed-rank test's exact distribution (as scipy's)."""
EXACT_TIED_MAX = 13
"""Up to this many with ties or zeros, the exact distribution conditional on the ties (scipy enumerates 2**13)."""


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided p-value of McNemar's exact test: the smaller discordant count against Binomial(a_only + b_only,
    1/2). 1.0 when no pair is discordant."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    term = tail = 1  # C(n, 0), in exact integers: 2**n overflows a float from n = 1,024 on
    for i in range(k):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired(both: int, a_only: int, b_only: int, neither: int) -> tuple[float, float]:
    """95 % interval of rate_b - rate_a over paired binary outcomes (Newcombe's method 10), as fractions."""
    n = both + a_only + b_only + neither
    if n == 0:
        return -1.0, 1.0
    p_b, p_a = (both + b_only) / n, (both + a_only) / n
    l_b, u_b = wilson(both + b_only, n)
    l_a, u_a = wilson(both + a_only, n)
    margins = (both + b_only) * (a_only + neither) * (both + a_only) * (b_only + neither)
    phi = (both * neither - a_only * b_only) / math.sqrt(margins) if margins else 0.0
    d = p_b - p_a
    lower = d - math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2))
    upper = d + math.sqrt(max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2))
    return max(-1.0, lower), min(1.0, upper)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    m = len(p_values)
    adjusted = [1.0] * m
    running = 0.0
    for rank, n in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[n]))
        adjusted[n] = running
    return adjusted


def bootstrap_mean_ci(differences: Sequence[float], *, seed: int = BOOTSTRAP_SEED,
                      resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """95 % percentile interval of the mean of paired differences, resampling pairs with `seed` (the indexes are
    drawn as scipy.stats.bootstrap draws them, so its interval with the same generator is this one)."""
    d = np.asarray(differences, dtype=float)
    if d.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        means[start:start + rows] = d[rng.integers(0, d.size, (rows, d.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def wilcoxon_signed_rank(differences: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test, zero differences dropped from the ranking (scipy's
    `zero_method="wilcox"`); 1.0 when all are zero. The method is scipy's `method="auto"` (scipy >= 1.15), chosen on
    the n differences given, zeros included:

    - n <= 50, no tie among the magnitudes and no zero: the exact null distribution of the positive-rank sum;
    - n <= 13 with ties or zeros: the exact distribution conditional on the tied ranks, over all 2**n sign
      patterns (scipy's permutation test, which enumerates them all at that size): the same p-value;
    - otherwise the normal approximation with the tie correction and without the continuity correction.

    (Before scipy 1.15, `auto` took the normal approximation whenever there were ties or zeros: small samples with
    ties differ from those versions' p-values, as scipy's own did.)
    """
    given = np.asarray(differences, dtype=float)
    d = given[given != 0]
    n = d.size
    if n == 0:
        return 1.0
    magnitudes = np.abs(d)
    ranks = _average_ranks(magnitudes)
    r_plus = float(ranks[d > 0].sum())
    _, ties = np.unique(magnitudes, return_counts=True)
    exact_ranks = (ties == 1).all() and n == given.size
    if (exact_ranks and given.size <= EXACT_WILCOXON_MAX) or given.size <= EXACT_TIED_MAX:
        doubled = np.rint(2 * ranks).astype(int)  # average ranks are halves: twice them are whole
        counts = _signed_rank_counts(doubled)
        observed = round(2 * r_plus)
        below, above = int(counts[: observed + 1].sum()), int(counts[observed:].sum())
        return min(1.0, 2 * min(below, above) / float(1 << n))
    statistic = min(r_plus, n * (n + 1) / 2 - r_plus)
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - float((ties**3 - ties).sum()) / 48
    if variance <= 0:
        return 1.0
    z = (statistic - mean) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2)))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(values.size)
    ranks[order] = np.arange(1, values.size + 1)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return np.asarray(sums[inverse] / counts[inverse])


def _signed_rank_counts(ranks: np.ndarray) -> np.ndarray:
    """How many of the 2**n sign patterns of the (whole) ranks give each positive-rank sum 0..sum (exact
    integers)."""
    counts = np.zeros(int(ranks.sum()) + 1, dtype=object)
    counts[0] = 1
    for rank in ranks.tolist():
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    return counts
