"""TomoNav (testnav/searches/tomonav.py) on small constructed tables: it evaluates the
surrogate's predicted front first, refits as results arrive, spends the budget exactly,
is deterministic per seed and runs under the live oracle; and the inference-cost view."""

import numpy as np
import pandas as pd
import pytest

from testnav import searches
from testnav.core.early_stopping import Stopping, input_order, stop_after
from testnav.core.lattice import Lattice
from testnav.core.oracle import Oracle, TableOracle
from testnav.core.pareto import nondominated_mask
from testnav.core.recall import auc_recall, first_sightings, recall_curve
from testnav.core.table import Objectives, minmax
from testnav.core.trace import cumulative, make_trace
from testnav.errors import UserError
from testnav.groundtruth.inferences import auc_recall_inferences, inference_summary, table_costs
from testnav.searches.tomonav import next_batch
from testnav.stopping.level_surrogate import Surrogate


def table(n=3, levels=5, seed=0):
    """δ rises and ρ falls with severity (family weights differ), plus an interaction and noise."""
    lat = Lattice(n, levels)
    rng = np.random.default_rng(seed)
    t = lat.tuples
    d = (t * rng.random(n)).sum(1) + 0.1 * t[:, 0] * t[:, -1] + 0.5 * rng.random(lat.size)
    r = -(t * rng.random(n)).sum(1) + 0.5 * rng.random(lat.size)
    return Objectives(lat, minmax(d), minmax(r))


class Recorder(TableOracle):
    def __init__(self, obj):
        super().__init__(obj)
        self.asked = []

    def evaluate(self, indices, names=("delta", "rho")):
        self.asked.append(np.asarray(indices).copy())
        return super().evaluate(indices, names)


def test_first_batch_is_the_predicted_front():
    obj = table()
    search = searches.make("tomonav", init_order=1, init_random=0, batch=1000, kappa=1.0)
    p = search.run(TableOracle(obj), obj.lattice.size, seed=3)
    init = np.flatnonzero(obj.lattice.orders <= 1)
    assert np.array_equal(p[: len(init)], init)  # the initial design: Θ≤1, in lattice order
    # refit the surrogate ourselves on what the search had seen, and predict the front
    values = np.column_stack([obj.delta, obj.rho])
    model = Surrogate(obj.lattice, "additive_forest", seed=3).fit(init, values[init])
    cand = np.setdiff1d(np.arange(obj.lattice.size), init)
    mean, sd = model.predict(cand)
    opt = mean + sd
    observed = values[init[init != 0]]
    pts = np.concatenate([opt, observed])
    front = nondominated_mask(pts[:, 0], pts[:, 1])[: len(cand)]
    expected = set(cand[front].tolist())
    assert 0 < len(expected) < len(cand)
    assert set(p[len(init) : len(init) + len(expected)].tolist()) == expected
    # a batch smaller than the front takes part of it: the most crowded (spread-out) members
    small = searches.make("tomonav", init_order=1, init_random=0, batch=4, kappa=1.0).run(
        TableOracle(obj), len(init) + 4, seed=3
    )
    assert len(expected) > 4 and set(small[len(init) :].tolist()) <= expected


def test_next_batch_prefers_the_front_and_spreads_by_crowding():
    cand = np.array([10, 11, 12, 13, 14])
    opt = np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9], [0.4, 0.4], [0.55, 0.45]])
    observed = np.array([[0.45, 0.45]])  # dominates candidate 13, not the others
    assert next_batch(opt, cand, observed, 2).tolist() == [10, 12]  # the front's extremes (infinite crowding)
    assert set(next_batch(opt, cand, observed, 4).tolist()) == {10, 11, 12, 14}
    assert next_batch(opt, cand, observed, 5)[-1] == 13  # dominated, hence last
    assert len(next_batch(opt, cand, observed, 9)) == 5


def test_it_refits_after_every_batch_and_the_results_change_its_choices():
    obj = table(seed=1)
    search = searches.make("tomonav", init_order=1, init_random=0, batch=8, grow=False)
    oracle = Recorder(obj)
    p = search.run(oracle, 60, seed=0)
    h = search.history
    assert [e["fit"] for e in h] == list(range(1, len(h) + 1)) and len(h) == (60 - 13 + 7) // 8
    for prev, nxt in zip(h, h[1:]):  # each fit has seen everything evaluated before it, nothing more
        assert set(nxt["evaluated"].tolist()) == set(prev["evaluated"].tolist()) | set(prev["chosen"].tolist())
    assert [a.tolist() for a in oracle.asked[1:]] == [e["chosen"].tolist() for e in h]
    # the same Θ≤1 values but other values elsewhere: same first batch, different later ones
    other = np.random.default_rng(9).permutation(obj.lattice.size)
    low = obj.lattice.orders <= 1
    d, r = obj.delta.copy(), obj.rho.copy()
    d[~low], r[~low] = obj.delta[other][~low], obj.rho[other][~low]
    q = searches.make("tomonav", init_order=1, init_random=0, batch=8, grow=False).run(
        TableOracle(Objectives(obj.lattice, d, r)), 60, seed=0
    )
    assert np.array_equal(p[:21], q[:21]) and not np.array_equal(p[21:], q[21:])


@pytest.mark.parametrize("budget", [1, 7, 13, 50, 125, 126, 400])
def test_budget_is_spent_exactly(budget):
    obj = table()
    oracle = Recorder(obj)
    p = searches.make("tomonav", init_order=1, init_random=5, batch=16).run(oracle, budget, seed=2)
    assert len(p) == budget and sum(len(a) for a in oracle.asked) == budget
    size = obj.lattice.size
    assert first_sightings(p).sum() == min(budget, size)  # no repeat before Θ is exhausted
    assert p.min() >= 0 and p.max() < size


def test_deterministic_per_seed():
    obj = table(seed=4)
    run = lambda s: searches.make("tomonav", init_order=1, init_random=6).run(TableOracle(obj), 200, seed=s)  # noqa: E731
    assert np.array_equal(run(1), run(1)) and not np.array_equal(run(1), run(2))


def test_beats_random_on_a_structured_table():
    obj = table(n=3, levels=6, seed=5)

    def auc(p):
        return auc_recall(recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size))

    tomo = np.mean(
        [
            auc(searches.make("tomonav", init_order=1, init_random=10, batch=10).run(TableOracle(obj), 216, s))
            for s in range(3)
        ]
    )
    rand = np.mean([auc(np.random.default_rng(s).permutation(obj.lattice.size)) for s in range(3)])
    assert tomo > rand + 0.1


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(surrogate="gp"), r"surrogate=gp \(valid: additive_forest, forest\)"),
        (dict(batch=0), "batch=0"),
        (dict(kappa=-1), "kappa=-1"),
        (dict(init_order=-2), "init_order=-2"),
    ],
)
def test_bad_parameters(kwargs, pattern):
    with pytest.raises(UserError, match=pattern):
        searches.make("tomonav", **kwargs)


def test_plain_forest_and_an_empty_initial_design():
    obj = table()
    p = searches.make("tomonav", init_order=-1, init_random=0, surrogate="forest", batch=20).run(
        TableOracle(obj), 125, seed=0
    )
    assert sorted(p.tolist()) == list(range(125))


class FakeLive(Oracle):
    """The live oracle's interface (evaluate only; table() refuses), memoised, counting model runs."""

    def __init__(self, obj):
        self.lattice, self.obj, self.memo = obj.lattice, obj, {}

    def evaluate(self, indices, names=("delta", "rho")):
        for i in np.asarray(indices).ravel():
            self.memo.setdefault(int(i), (self.obj.delta[i], self.obj.rho[i]))
        return np.array([self.memo[int(i)] for i in np.asarray(indices).ravel()]).reshape(-1, 2)

    def table(self, names=("delta", "rho")):
        raise UserError("no table live")


def test_runs_on_an_oracle_without_a_table():
    obj = table()
    live = FakeLive(obj)
    p = searches.make("tomonav", init_order=1).run(live, 80, seed=0)
    assert (
        np.array_equal(p, searches.make("tomonav", init_order=1).run(TableOracle(obj), 80, seed=0))
        and len(live.memo) == 80
    )


# ---- the cost-aware view ----


def test_inference_auc_with_unit_costs_is_the_unique_auc():
    obj = table()
    p = np.random.default_rng(0).permutation(obj.lattice.size)[:70]
    unit = np.ones(obj.lattice.size, dtype=np.int64)
    assert auc_recall_inferences(p, obj.pstar, unit) == pytest.approx(
        auc_recall(recall_curve(p, obj.pstar, obj.lattice.size))
    )


def test_cheap_configurations_shift_the_inference_curve():
    costs = np.array([5, 1, 1, 10])
    pstar = np.array([1, 3])
    # finds θ=1 after 1 inference, θ=3 after 11; then holds recall 1 until Σ = 17
    assert auc_recall_inferences([1, 3], pstar, costs) == pytest.approx((0.75 * 10 + 1.0 * 6) / 17)
    assert cumulative([1, 3, 1, 0], first_sightings([1, 3, 1, 0]), costs).tolist() == [1, 11, 11, 16]


def test_table_costs_follow_early_stopping_and_fall_back_without_outcomes(tmp_path):
    lat = Lattice(2, 3)
    rng = np.random.default_rng(0)
    correct = [rng.random(400) < p for p in np.linspace(0.95, 0.3, lat.size)]
    df = pd.DataFrame(lat.tuples, columns=["t1", "t2"]).assign(
        delta=np.arange(9.0), rho=-np.arange(9.0), correct=[c.tolist() for c in correct]
    )
    df.iloc[::-1].to_parquet(tmp_path / "gt.parquet")  # rows in any order
    rule = Stopping(batch=50, window=3, delta=0.02, enabled=True)
    costs, unit = table_costs(tmp_path / "gt.parquet", lat, rule, seed=1)
    order = input_order(400, 1)
    assert costs.tolist() == [stop_after(c[order], rule) for c in correct] and "early stopping" in unit
    assert costs.max() <= 400 and costs.min() >= 150
    df.drop(columns="correct").to_csv(tmp_path / "plain.csv", index=False)
    costs, unit = table_costs(tmp_path / "plain.csv", lat, rule)
    assert costs.tolist() == [1] * 9 and "no per-input outcomes" in unit


def test_trace_and_summary_carry_inferences():
    obj = table(n=2, levels=4)
    costs = np.arange(1, 17)
    p = np.array([3, 15, 3, 5] + list(range(16)))
    values = np.column_stack([obj.delta, obj.rho])[p]
    trace = make_trace(p, obj.lattice, values, obj.pstar, costs)
    assert trace.columns[-1] == "inferences" and trace.inferences.iloc[-1] == costs.sum()
    assert trace.inferences.tolist()[:4] == [4, 20, 20, 26]
    s = inference_summary(trace, obj.lattice, obj.pstar, costs, "inputs (early stopping)")
    assert s["inferences"] == s["inferences_space"] == 136
    last = max(int(np.flatnonzero(p == i)[0]) for i in obj.pstar)
    assert s["inferences_to_full_recall"] == trace.inferences.iloc[last]
    assert 0 < s["auc_recall_inferences"] < 1


# ---- through run.py, as a user runs it (in this process: tests/helpers/cli_helpers.py) ----
