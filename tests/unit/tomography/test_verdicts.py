"""Verdicts a user can trust: intervals on measured accuracies, bounds on R(Q) that hold although the
surrogate is biased, and a three-valued gate that does not pass a failing model."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from testnav.core.intervals import binomial, half_width, with_psi_intervals
from testnav.core.lattice import Lattice
from testnav.errors import UserError
from testnav.tomography.bounds import MIN_SAMPLE, query_bound
from testnav.tomography.core import Settings, from_groundtruth
from testnav.tomography.gate import answer, gate
from testnav.tomography.query import QuerySpec
from testnav.tomography.surrogate import AdditiveLogitSurrogate, RobustnessSurrogate


# --- intervals on measured accuracies --------------------------------------------------------------
def test_psi_intervals_are_wilsons_and_leave_every_other_column():
    table = pd.DataFrame({"t1": [0, 1, 2], "psi": [0.95, 0.5, 0.0], "delta": [0.0, 0.45, 0.95]})
    out = with_psi_intervals(table, 400, 0.9)
    assert list(out.columns) == ["t1", "psi", "psi_low", "psi_high", "delta"]
    lo, hi = proportion_confint([380, 200, 0], 400, alpha=0.1, method="wilson")
    assert np.allclose(out.psi_low, lo) and np.allclose(out.psi_high, hi)
    assert (out.psi_low <= out.psi).all() and (out.psi <= out.psi_high).all()
    pd.testing.assert_frame_equal(out[table.columns], table)
    assert half_width(400) == pytest.approx(0.0488, abs=1e-4) and half_width(5000) < half_width(400) / 3
    assert binomial(0, 0) == (0.0, 1.0)
    with pytest.raises(UserError, match=r"confidence=1: a probability in \(0, 1\)"):
        binomial(1, 2, 1)


# --- the bound on R(Q) -------------------------------------------------------------------------------
def test_before_a_sample_the_bound_holds_whatever_the_forest_predicts():
    known = np.array([0.9, 0.8])
    for pred, truth in [(1.0, 0.0), (0.0, 1.0), (0.5, 0.2)]:
        b = query_bound(known, [400, 400], [], [], [], np.full(8, pred), 400)
        true_r = (known.sum() + 8 * truth) / 10
        assert b.low <= true_r <= b.high and b.sampled == 0 and b.unmeasured == 8
    # the unmeasured anywhere in [0, 1], less the inputs' term: the mean distance to each test's Wilson
    # low end, at the inputs' share of α (half of it, spent over reruns: 400 inputs are band 2 of 12)
    r = np.r_[known, np.full(8, 0.5)]
    low, _ = proportion_confint(r * 400, 400, alpha=0.025 / 12, method="wilson")
    assert b.low == pytest.approx(0.17 - np.mean(r - low), abs=1e-9)


def test_the_prediction_powered_bound_covers_a_biased_forest():
    """A population of 300 unmeasured tests whose predictions are biased by +0.08 (as the forest is
    on fourth-order tests): after sampling, the interval holds the truth at least at its confidence,
    and its centre has corrected the bias."""
    rng = np.random.default_rng(0)
    hits, shifts = 0, []
    for _ in range(400):
        truth = np.clip(rng.beta(4, 3, 300), 0, 1)
        pred = np.clip(truth + 0.08 + rng.normal(0, 0.05, 300), 0, 1)
        order = rng.permutation(300)
        s, rest = order[:40], order[40:]
        b = query_bound([], [], truth[s], pred[s], np.full(40, 1000), pred[rest], 1000)
        hits += b.low <= truth.mean() <= b.high
        shifts.append(b.estimate - truth.mean())
    assert hits / 400 >= 0.95
    assert abs(np.mean(shifts)) < 0.01  # the plain prediction is 0.08 off


def test_measured_everywhere_only_the_inputs_remain():
    """Wilson's score interval per test (never Wald's, which is 0 wide at an accuracy of 0 or 1), all
    of α on the inputs (nothing is predicted), spent over reruns: 1,000 inputs are band 3 (α/20)."""
    r = np.array([0.7, 0.8, 1.0])
    b = query_bound(r, [1000] * 3, [], [], [], [], 1000)
    low, high = proportion_confint(r * 1000, 1000, alpha=0.05 / 20, method="wilson")
    assert b.estimate == pytest.approx(r.mean())
    assert b.low == pytest.approx(r.mean() - np.mean(r - low)) and b.high == pytest.approx(min(np.mean(high), 1))
    perfect = query_bound([1.0] * 3, [1000] * 3, [], [], [], [], 1000)
    assert perfect.high == 1.0 and perfect.low < 0.995  # an accuracy of 1 on 1,000 inputs is not a certainty


# --- the gate, where the truth is known ------------------------------------------------------------
def synthetic(seed=0, n=600):
    """Per-input outcomes on a 4-family lattice at 4 levels with a three-way interaction the forest
    cannot see from orders ≤ 2: its predictions of order 3 and 4 are optimistic."""
    lat = Lattice(4, 4)
    rng = np.random.default_rng(seed)
    th = lat.tuples
    logit = 2.5 - 0.35 * th.sum(axis=1) - 0.6 * ((th[:, 0] > 0) & (th[:, 1] > 0) & (th[:, 2] > 0)) * th[:, 3]
    difficulty = rng.normal(0, 1.0, n)  # inputs differ: outcomes correlate across configurations
    p = 1 / (1 + np.exp(-(logit[:, None] - difficulty[None, :])))
    return lat, rng.random((lat.size, n)) < p


@pytest.fixture(scope="module")
def replayed():
    lat, out = synthetic()
    return from_groundtruth(out, lat, ["a", "b", "c", "d"], Settings(batch=100))


def orthants(names, levels):
    for order in (2, 3, 4):
        for fams in itertools.combinations(range(len(names)), order):
            for lv in itertools.product(range(1, levels), repeat=order):
                yield " & ".join(f"{names[f]} >= {a}" for f, a in zip(fams, lv))


def test_the_gate_never_passes_below_nor_fails_above_a_wide_margin(replayed):
    t = replayed.table
    high = (t.order >= 3) & ~t.measured
    assert (t.r_pred - t.r_true)[high].mean() > 0.02  # the forest over-estimates: the gate must not trust it
    queries = list(orthants(replayed.names, 4))[::7]
    decided = 0
    for q in queries:
        truth = answer(replayed, QuerySpec(expr=q))["R_true"]
        low = gate(replayed, QuerySpec(expr=q, min_accuracy=max(truth - 0.06, 0), measure="auto"))
        high_gate = gate(replayed, QuerySpec(expr=q, min_accuracy=min(truth + 0.06, 1), measure="auto"))
        assert low["decision"] != "fail" and high_gate["decision"] != "pass", q
        assert low["R_low"] <= truth <= low["R_high"], q
        decided += (low["decision"] == "pass") + (high_gate["decision"] == "fail")
    assert decided >= 1.5 * len(queries)  # it decides most of them, measuring what it must


def test_the_gate_measures_only_what_it_needs(replayed):
    q = "a >= 1 & b >= 1"
    truth = answer(replayed, QuerySpec(expr=q))["R_true"]
    easy = gate(replayed, QuerySpec(expr=q, min_accuracy=max(truth - 0.3, 0), measure="auto"))
    assert easy["decision"] == "pass" and easy["sampled"] <= 3 * MIN_SAMPLE  # far from the threshold: a small sample
    never = gate(replayed, QuerySpec(expr=q, min_accuracy=truth, measure="never"))
    assert never["decision"] == "undecided" and never["sampled"] == 0 and "measure='never'" in never["line"]
    # at the truth itself: undecidable, everything measured
    res = gate(replayed, QuerySpec(expr=q, min_accuracy=truth, measure="auto"))
    assert res["decision"] == "undecided" and res["sampled"] == res["inferred"]
    assert "only the inputs' sampling is left" in res["line"]


def test_an_empty_query_is_refused(replayed):
    with pytest.raises(UserError, match="selects no configuration"):
        gate(replayed, QuerySpec(expr="a >= 1 & a < 1", min_accuracy=0.5))


# --- a less biased surrogate -----------------------------------------------------------------------------
def test_the_additive_surrogate_extrapolates_what_the_forest_cannot():
    """Outcomes from a logit-additive model with pairwise interactions only: the additive surrogate,
    fitted on orders ≤ 2, predicts orders 3 and 4 nearly exactly; the forest over-estimates them."""
    lat = Lattice(4, 4)
    th = lat.tuples
    logit = 3.0 - 0.4 * th.sum(axis=1) - 0.15 * th[:, 0] * th[:, 1]
    truth = 1 / (1 + np.exp(-logit))
    n = 20000
    tests = {int(i): np.arange(n) < round(truth[i] * n) for i in np.flatnonzero(lat.orders <= 2)}
    additive = AdditiveLogitSurrogate().fit(lat, tests).predict()
    forest = RobustnessSurrogate().fit(lat, tests).predict()
    high = lat.orders >= 3
    assert np.abs(additive[high] - truth[high]).max() < 0.01
    assert (forest[high] - truth[high]).mean() > 0.05
    with pytest.raises(ValueError, match="needs every test of order ≤ 2"):
        AdditiveLogitSurrogate().fit(lat, {0: tests[0]})


def test_the_surrogate_is_a_setting(replayed):
    with pytest.raises(UserError, match=r"tomography.surrogate=boosted \(valid: forest, additive\)"):
        from omegaconf import OmegaConf

        Settings.from_config(OmegaConf.create({"tomography": {**Settings().__dict__, "surrogate": "boosted"}}))
