"""A reduced conformance suite (make test-all): the verdicts' studies, run small on populations with a
known truth, keep false passes within the bar (the Wilson 95 % upper end ≤ 7 %) and their power.
results/tables/conformance.md holds the full runs; the R(Q) gate's reduced run is in
tests/unit/tomography/test_bounds.py."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from tests.helpers.cli_helpers import load_script

pytestmark = pytest.mark.slow


def upper(k: int, n: int) -> float:
    return float(proportion_confint(k, n, 0.05, method="wilson")[1])


def test_regression_gate_every_configuration_measured():
    study = load_script("gate_study")
    k = study.K
    at_bound = study.simulate(np.r_[0.02, np.zeros(k - 1)], 0.0, 1000, 1000, seed=3, before=False)["now"]
    assert upper(at_bound["pass"], 1000) <= 0.07  # the test's size at its boundary
    lost = study.simulate(np.r_[0.06, np.zeros(k - 1)], 0.0, 400, 300, seed=4, before=False)["now"]
    assert lost["pass"] == 0 and lost["fail"] >= 180  # 6 points lost on 400 inputs: 4 in 5 caught, none passed
    same = study.simulate(np.zeros(k), 0.0, 10_000, 100, seed=5, before=False)["now"]
    assert same["fail"] <= 1 and same["pass"] >= 95  # an unchanged model passes where N can show it


def test_regression_gate_through_the_warm_start():
    study = load_script("gate_study")
    hidden = study.simulate_warm(25, 0.05, reps=6, seed=6)
    assert hidden["now"]["pass"] == 0 and hidden["now"]["fail"] == 6
    copy = study.simulate_warm(0, 0.0, reps=4, seed=7)
    # a copy passes without measuring every configuration (the full run: a median of 58 of 124)
    assert copy["now"]["pass"] == 4 and copy["evaluated_median"] < 0.6 * (len(study.LATTICE) - 1)


def test_breaks_and_interactions():
    study = load_script("conformance_findings")
    rows = study.breaks_rates(reps=30, seed=8, sizes=(400,))
    nulls = sum(r["null_breaks"] for r in rows)
    assert upper(nulls, sum(r["reps"] for r in rows)) <= 0.07
    below = [r for r in rows if r["loss"] < 0.01]
    assert upper(sum(r["breaks"] for r in below), sum(r["reps"] for r in below)) <= 0.07
    flips = next(r for r in rows if r["scenario"] == "flips" and r["loss"] == 0.03)
    assert flips["breaks"] >= 10  # a 3-point loss on 400 inputs: about 2 in 3 in the full run
    inter = {r["excess"]: r for r in study.interaction_rates(reps=800, seed=9, sizes=(1000,))}
    assert upper(inter[0.0]["significant"], 800) <= 0.07 and inter[0.04]["significant"] >= 760
