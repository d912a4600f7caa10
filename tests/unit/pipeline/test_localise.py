"""`Comparison.families` ranks families by their estimated effect on the paired drop (issue 75, item 4): a
main-effects model of the per-configuration drop (statsmodels) and each family's own curve, with intervals;
not the count of regressions among the configurations that include a family, which blames whichever
family the compared configurations hold most often."""

from __future__ import annotations

import io
from itertools import product

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from testnav.pipeline.compare import compare_records
from testnav.pipeline.localise import design, drop_interval
from testnav.pipeline.record import RunRecord
from testnav.pipeline.specs import CompareSpec

FAMS = [{"name": n, "params": [1, 2, 3], "labels": [f"{n}{k}" for k in (1, 2, 3)]} for n in ("a", "b", "c")]
N = 2000


def pair(drop, thetas, seed=0):
    """Baseline and new records over `thetas` (3 families × 4 levels) on N inputs: the new model gets wrong
    a share drop(θ) of the inputs the baseline got right, and right a few it got wrong (churn)."""
    rng = np.random.default_rng(seed)
    before = rng.random((len(thetas), N)) < 0.9
    after = before.copy()
    for k, t in enumerate(thetas):
        right, wrong = np.flatnonzero(before[k]), np.flatnonzero(~before[k])
        after[k, rng.choice(right, int(round(drop(t) * N)), replace=False)] = False
        after[k, rng.choice(wrong, 10, replace=False)] = True

    def rec(correct, model):
        return RunRecord(
            benchmark="synthetic",
            families=FAMS,
            levels=4,
            perturb_seed=0,
            model=model,
            data="d0",
            fidelity=None,
            thetas=np.array(thetas),
            correct=correct,
            rho=np.full(len(thetas), np.nan),
            name="synthetic",
        )

    return rec(before, "m0"), rec(after, "m1")


def compared():
    """What a warm start might have compared: every configuration with b, and only four without."""
    every = [t for t in product(range(4), repeat=3) if any(t)]
    return [(0, 0, 0)] + [t for t in every if t[1] > 0] + [(1, 0, 0), (3, 0, 0), (0, 0, 2), (2, 0, 1)]


def culprit_a(t) -> float:
    """Every perturbed configuration loses 4 points; family a 6 more per level (the preprocessing's fault)."""
    return 0.0 if not any(t) else 0.04 + 0.06 * t[0]


def test_the_family_that_causes_the_drop_ranks_first_where_counts_blame_another():
    base, new = pair(culprit_a, compared())
    c = compare_records(base, new, CompareSpec.given())
    f = c.families.set_index("family")
    by_count = f["regressions"].sort_values(ascending=False, kind="stable").index.tolist()
    assert by_count[0] == "b"  # the count blames b: most configurations compared hold it
    assert c.families["family"].tolist()[0] == "a"
    # a's effect at its worst severity: 3 levels × 6 points = 18 points; b and c none
    assert f.loc["a", "effect_low"] < 0.18 < f.loc["a", "effect_high"] and f.loc["a", "effect_low"] > 0.14
    for other in ("b", "c"):
        assert f.loc[other, "effect_low"] < 0.0 < f.loc[other, "effect_high"] or abs(f.loc[other, "effect"]) < 0.01
    # a alone: its worst severity, 4 + 18 = 22 points, inside its paired interval
    assert f.loc["a", "alone_at"] == "a=3 (a3)" and f.loc["a", "alone_low"] < 0.22 < f.loc["a", "alone_high"]
    assert "families by their effect on the drop (points, 95%): a +" in str(c)
    assert c.summary["families"][0]["family"] == "a"


def test_the_effect_is_statsmodels_ols_with_hc3_at_the_most_damaging_severity():
    base, new = pair(culprit_a, compared(), seed=1)
    c = compare_records(base, new, CompareSpec.given(confidence=0.9))
    t = c.table
    x = design(t[["t1", "t2", "t3"]].to_numpy(), ["a", "b", "c"], pairs=False)
    fit = sm.OLS(-t["change"].to_numpy(), x).fit(cov_type="HC3")
    low, high = fit.conf_int(alpha=0.1).loc["a=3"]
    f = c.families.set_index("family")
    assert (f.loc["a", "effect"], f.loc["a", "effect_low"], f.loc["a", "effect_high"]) == pytest.approx(
        (fit.params["a=3"], low, high)
    )
    assert f.loc["a", "effect_at"] == "a=3 (a3)"  # 6 points a level: its largest coefficient


def test_an_interaction_pair_shows_its_excess_and_a_masking_pair_a_negative_one():
    jitter = dict(zip(product(range(4), repeat=3), np.random.default_rng(5).normal(0, 0.005, 64)))

    def drop(t):
        if not any(t):
            return 0.0
        both = lambda i, j: t[i] > 0 and t[j] > 0  # noqa: E731
        return 0.04 + 0.02 * sum(t) + 0.10 * both(0, 2) - 0.03 * both(1, 2) + jitter[t]

    every = [(0, 0, 0)] + [t for t in product(range(4), repeat=3) if any(t)]
    base, new = pair(drop, every)
    p = compare_records(base, new, CompareSpec.given()).pairs.set_index(["family", "with"])
    assert p.index[0] == ("a", "c") and p.loc[("a", "c"), "excess_low"] < 0.10 < p.loc[("a", "c"), "excess_high"]
    assert p.index[-1] == ("b", "c") and p.loc[("b", "c"), "excess_high"] < 0  # c masks b: less than the two
    assert p.loc[("a", "b"), "excess_low"] < 0 < p.loc[("a", "b"), "excess_high"]


def test_too_few_configurations_rank_by_the_own_curve_and_say_no_effect():
    thetas = [(0, 0, 0), (1, 0, 0), (0, 2, 0), (0, 0, 3)]
    base, new = pair(lambda t: 0.05 * t[1], thetas)
    f = compare_records(base, new, CompareSpec.given()).families
    assert f["effect"].isna().all() and f["family"].iloc[0] == "b"  # 4 configurations, 7 parameters
    assert str(compare_records(base, new, CompareSpec.given())).count("families by their effect") == 0


def test_the_own_curve_interval_is_two_sided_tangos():
    from testnav.pipeline.noninferiority import drop_bound

    low, high = drop_interval(30, 10, 400, 0.95)
    assert low == pytest.approx(drop_bound(30, 10, 400, 0.975, upper=False))
    assert high == pytest.approx(drop_bound(30, 10, 400, 0.975, upper=True))
    assert low < 20 / 400 < high


def test_the_report_shows_effects_with_intervals(tmp_path):
    base, new = pair(culprit_a, compared())
    html = compare_records(base, new, CompareSpec.given()).report(tmp_path / "c.html").read_text(encoding="utf-8")
    assert "The families behind the drop" in html and "effect on the drop" in html
    section = html.split('id="families"')[1]
    first = pd.read_html(io.StringIO(section[section.index("<table") :].split("</table>")[0] + "</table>"))[0]
    assert first["family"].iloc[0] == "a" and first["effect on the drop"].iloc[0].startswith("+")


def test_two_families_that_cost_alike_are_said_not_separated(tmp_path):
    jitter = dict(zip(product(range(4), repeat=3), np.random.default_rng(2).normal(0, 0.005, 64)))
    every = [(0, 0, 0)] + [t for t in product(range(4), repeat=3) if any(t)]
    base, new = pair(lambda t: 0.0 if not any(t) else 0.03 + 0.05 * (t[0] > 0) + 0.05 * (t[1] > 0) + jitter[t], every)
    c = compare_records(base, new, CompareSpec.given())
    assert set(c.families["family"].iloc[:2]) == {"a", "b"}
    assert str(c).splitlines()[-2].endswith("the first two not separated (their intervals overlap)")
    assert "the data do not say which of them costs more" in c.report(tmp_path / "c.html").read_text(encoding="utf-8")
    clear = compare_records(*pair(culprit_a, compared()), CompareSpec.given())
    assert "not separated" not in str(clear)
