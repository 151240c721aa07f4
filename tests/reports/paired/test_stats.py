"""The comparison's statistics against scipy's on fixed inputs (scipy is a test-only dependency)."""

from __future__ import annotations

import numpy as np
import pytest

from reports.paired import stats

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (the dev extra) checks the statistics")


@pytest.mark.parametrize(("a_only", "b_only"), [(3, 9), (10, 10), (1, 20), (0, 7), (400, 460), (5000, 5200)])
def test_mcnemar_exact_is_scipys_binomial_test_on_the_discordant_pairs(a_only: int, b_only: int) -> None:
    expected = scipy_stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
    assert stats.mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9)


def test_no_discordant_pair_gives_p_one() -> None:
    assert stats.mcnemar_exact(0, 0) == 1.0
    assert stats.wilcoxon_signed_rank([0.0] * 12) == 1.0


def test_wilcoxon_exact_without_ties_and_normal_with_them_match_scipy() -> None:
    rng = np.random.default_rng(1)
    exact = rng.normal(0.3, 1, 20)  # 20 distinct differences: scipy's exact distribution
    assert stats.wilcoxon_signed_rank(exact) == pytest.approx(scipy_stats.wilcoxon(exact).pvalue, rel=1e-9)
    tied = np.round(rng.normal(0.2, 1, 80), 1)  # > 50 with ties and zeros: the normal approximation
    assert stats.wilcoxon_signed_rank(tied) == pytest.approx(scipy_stats.wilcoxon(tied).pvalue, rel=1e-9)
    large = rng.normal(-0.1, 1, 300)
    assert stats.wilcoxon_signed_rank(large) == pytest.approx(scipy_stats.wilcoxon(large).pvalue, rel=1e-9)


@pytest.mark.parametrize("differences", [
    [1, 1, 2, -3, 4, 5, 2, -1],  # ties, 8 differences: the exact distribution given the ties (scipy permutes)
    [0, 1, 1, -1, 2, 2, 3, -4, 5],  # ties and a zero
    [0, 0, 1, 2, -3, 4, 5, 6, 7],  # zeros only: the exact distribution of the 7 others
    [1, 1, 1, 1, -1],  # every magnitude tied
    [2, -1, 2, 2, -3, 3, 3, 1, -1, 2, 4, 2, 1],  # 13 with ties: still exact
    [2, -1, 2, 2, -3, 3, 3, 1, -1, 2, 4, 2, 1, 5],  # 14 with ties: the normal approximation
    [0, 0, 0, 1.5, -0.2, 2.1, 0.7, 1.1, -0.4, 0.9, 1.3, 0.8, 2.2, -0.1, 0.6, 1.7, 0.3, 1.9, 2.5, 0.05],  # 20, zeros
    [1.0, 2.0, 3.0],  # three distinct: exact
    [2.0],
])
def test_wilcoxon_with_ties_zeros_and_small_samples_is_scipys_auto_method(differences: list[float]) -> None:
    assert stats.wilcoxon_signed_rank(differences) == pytest.approx(scipy_stats.wilcoxon(differences).pvalue,
                                                                    rel=1e-9)


def test_with_ties_the_small_sample_p_value_is_exact_not_the_normal_approximation() -> None:
    tied = [1, 1, 2, -3, 4, 5, 2, -1]
    exact = stats.wilcoxon_signed_rank(tied)
    assert exact == 44 / 256  # 2 x 22 of the 2**8 sign patterns as extreme, the ranks halves (scipy permutes all)
    assert exact != pytest.approx(scipy_stats.wilcoxon(tied, method="asymptotic").pvalue, rel=1e-3)


def test_the_bootstrap_with_its_seed_is_scipys_percentile_bootstrap() -> None:
    differences = np.random.default_rng(3).normal(0.1, 1, 300)
    expected = scipy_stats.bootstrap((differences,), np.mean, n_resamples=2000, method="percentile",
                                     rng=np.random.default_rng(7)).confidence_interval
    low, high = stats.bootstrap_mean_ci(differences, seed=7, resamples=2000)
    assert (low, high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    assert stats.bootstrap_mean_ci(differences) == stats.bootstrap_mean_ci(differences)  # the default seed


def test_wilson_limits_are_scipys() -> None:
    for successes, n in ((0, 10), (7, 20), (45, 45), (312, 1000)):
        expected = scipy_stats.binomtest(successes, n).proportion_ci(method="wilson")
        assert stats.wilson(successes, n) == pytest.approx((expected.low, expected.high), abs=1e-12)


def test_newcombes_paired_interval_holds_the_difference_and_narrows_with_correlation() -> None:
    low, high = stats.newcombe_paired(40, 2, 10, 48)  # B passes 8 more of 100
    assert low < 0.08 < high and 0 < low  # 8 of 12 discordant pairs one way: significant, as McNemar says
    assert stats.mcnemar_exact(2, 10) < 0.05
    independent = stats.newcombe_paired(25, 25, 31, 19)  # the same margins' spread, no correlation
    assert high - low < independent[1] - independent[0]
    same_low, same_high = stats.newcombe_paired(30, 0, 0, 70)  # no discordant pair
    assert same_low <= 0 <= same_high and same_high - same_low < 0.1


def test_holm_steps_down() -> None:
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([]) == []
