"""The regression gate's statistics (issue 74, item 1): Tango's score bound on a paired drop, checked
against references (McNemar's statistic in statsmodels at δ₀ = 0; the restricted maximum likelihood
found by scipy's optimiser; the one-sided coverage on simulated pairs), and the three-valued verdict."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.contingency_tables import mcnemar

from testnav.pipeline.noninferiority import beyond_p, cleared, drop_bound, judge, restricted_pc, score_z


@pytest.mark.parametrize("b, c", [(7, 3), (20, 5), (1, 12), (40, 20)])
def test_at_no_change_the_score_is_mcnemars_statistic(b, c):
    chi2 = mcnemar([[100, b], [c, 60]], exact=False, correction=False).statistic
    assert float(score_z(b, c, 160 + b + c, 0.0)) ** 2 == pytest.approx(chi2, rel=1e-12)


@pytest.mark.parametrize(
    "b, c, n, delta", [(10, 2, 400, 0.02), (3, 9, 150, -0.01), (0, 0, 300, 0.05), (40, 20, 160, 0.3)]
)
def test_the_restricted_estimate_maximises_the_likelihood_under_the_null(b, c, n, delta):
    """p̃_c is the argmax of b·log(p_c + δ) + c·log p_c + (n − b − c)·log(1 − 2p_c − δ) (scipy's optimiser)."""

    def nll(pc):
        return -(b * np.log(pc + delta) + c * np.log(pc) + (n - b - c) * np.log(1 - 2 * pc - delta))

    lo, hi = max(0.0, -delta) + 1e-12, (1 - delta) / 2 - 1e-12
    best = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    got = float(restricted_pc(b, c, n, delta))
    assert got == pytest.approx(best.x, abs=1e-6) or (c == 0 and got < 1e-9)


def test_the_bound_inverts_the_test_and_is_not_zero_wide_without_flips():
    b, c, n = 12, 4, 400
    high, low = drop_bound(b, c, n, 0.95), drop_bound(b, c, n, 0.95, upper=False)
    assert low < (b - c) / n < high
    z = stats.norm.ppf(0.95)
    assert float(score_z(b, c, n, high)) == pytest.approx(-z, abs=1e-6)
    assert float(beyond_p(b, c, n, low)) == pytest.approx(0.05, abs=1e-6)
    # no input flipped: an identical copy is bounded by what n inputs can show, sqrt(n·δ/(1 − δ)) = z
    d = drop_bound(0, 0, n, 0.95)
    assert d == pytest.approx(z**2 / (n + z**2), rel=1e-6) and d > 0
    assert drop_bound(0, 0, 4 * n, 0.95) < d  # more inputs, a tighter bound


@pytest.mark.parametrize("pb, pc, n", [(0.02, 0.0, 400), (0.035, 0.015, 400), (0.05, 0.03, 1000), (0.2, 0.18, 400)])
def test_the_upper_bound_covers_the_true_drop_at_its_confidence(pb, pc, n):
    """4,000 simulated pairs per case: the one-sided 95 % bound falls below the true drop at most ~5 %
    of the time (the Wilson upper end of the miss rate below 7 %)."""
    rng = np.random.default_rng(0)
    counts = rng.multinomial(n, [pb, pc, 1 - pb - pc], size=4000)
    misses = sum(drop_bound(int(x), int(y), n, 0.95) < pb - pc for x, y, _ in counts)
    from statsmodels.stats.proportion import proportion_confint

    assert proportion_confint(misses, 4000, 0.05, "wilson")[1] < 0.07


def test_the_verdict_is_three_valued_and_the_warm_tolerance_holds_sampled_ones():
    n, m = 400, 0.02
    b, c = np.array([0, 1, 2]), np.array([0, 1, 0])  # three configurations that barely changed
    high = [drop_bound(x, y, n, 0.95) <= m for x, y in zip(b, c)]
    assert judge(b, c, n, high, m, 0.95)[0] == "pass"
    b2, c2 = np.array([0, 1, 40]), np.array([0, 1, 2])  # one lost 9.5 points: shown beyond 2
    h2 = [drop_bound(x, y, n, 0.95) <= m for x, y in zip(b2, c2)]
    assert judge(b2, c2, n, h2, m, 0.95)[:2] == ("fail", 1)
    b3, c3 = np.array([0, 1, 14]), np.array([0, 1, 4])  # one lost 2.5 points: neither shown
    h3 = [drop_bound(x, y, n, 0.95) <= m for x, y in zip(b3, c3)]
    assert judge(b3, c3, n, h3, m, 0.95) == ("undecided", 0, 1, 0)
    sampled = np.array([False, False, True])  # ... unless it was sampled at random and the tolerance holds it
    assert judge(b3, c3, n, h3, m, 0.95, sampled, room=1) == ("pass", 0, 1, 1)
    assert judge(b3, c3, n, h3, m, 0.95, sampled, room=0)[0] == "undecided"
    assert judge(b, c, n, high, m, 0.95, np.zeros(3, bool), room=-1)[0] == "undecided"  # the bound allows too many


def test_cleared_is_the_bound_within_max_drop_without_finding_it():
    b, c = np.meshgrid(np.arange(0, 30, 3), np.arange(0, 12, 2))
    b, c = b.ravel(), c.ravel()
    for m in (0.0, 0.02, 0.05):
        by_root = np.array([drop_bound(int(x), int(y), 400, 0.95) <= m for x, y in zip(b, c)])
        assert (cleared(b, c, 400, m, 0.95) == by_root).all() and by_root.any() and not by_root.all()


def test_holm_without_asking_is_statsmodels_holm():
    from statsmodels.stats.multitest import multipletests

    from testnav.pipeline.noninferiority import holm

    rng = np.random.default_rng(1)
    for p in (rng.uniform(0, 1, 50), rng.uniform(0, 0.01, 50), np.r_[1e-5, rng.uniform(0.2, 1, 30)], np.zeros(0)):
        expect = multipletests(p, 0.05, "holm")[0] if len(p) else np.zeros(0, bool)
        assert (holm(p, 0.95) == expect).all()
