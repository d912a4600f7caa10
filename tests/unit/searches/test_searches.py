import numpy as np
import pytest

from testnav import searches
from testnav.core.lattice import Lattice
from testnav.core.oracle import TableOracle
from testnav.core.recall import auc_recall, first_sightings, recall_curve
from testnav.core.table import Objectives, minmax
from testnav.errors import UserError


def synthetic(n=4, levels=6, seed=0):
    """δ rises and ρ falls with severity, plus noise: a front spread across orders."""
    lat = Lattice(n, levels)
    rng = np.random.default_rng(seed)
    t = lat.tuples
    d = (t * rng.random(n)).sum(1) + rng.random(lat.size)
    r = -(t * rng.random(n)).sum(1) + 2 * rng.random(lat.size)
    return Objectives(lat, minmax(d), minmax(r))


class CountingOracle(TableOracle):
    def __init__(self, obj):
        super().__init__(obj)
        self.calls = 0

    def evaluate(self, indices, names=("delta", "rho")):
        self.calls += len(np.atleast_1d(indices))
        return super().evaluate(indices, names)


SEARCHES = {
    "nsga2": lambda: searches.make("nsga2"),
    "nsga2_fast": lambda: searches.make("nsga2", engine="fast"),
    "nsga2_noelim": lambda: searches.make("nsga2", eliminate_duplicates=False),
    "ga": lambda: searches.make("ga"),
    "ga_fast": lambda: searches.make("ga", engine="fast"),
    "delta_only": lambda: searches.make("nsga2", objectives=["delta"]),
    "rho_only_fast": lambda: searches.make("nsga2", objectives=["rho"], engine="fast"),
    "greedy": lambda: searches.make("greedy"),
    "random": lambda: searches.make("random"),
}


@pytest.mark.parametrize("name", SEARCHES)
@pytest.mark.parametrize("budget", [110, 1000])
def test_exact_budget_and_identical_seeds(name, budget):
    obj = synthetic()
    a = SEARCHES[name]().run(TableOracle(obj), budget, seed=4)
    b = SEARCHES[name]().run(TableOracle(obj), budget, seed=4)
    c = SEARCHES[name]().run(TableOracle(obj), budget, seed=5)
    assert len(a) == budget  # pymoo's own n_eval would overshoot 1000 (μ ∤ B − μ)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() < obj.lattice.size


def test_pymoo_engine_asks_the_oracle_once_per_proposal():
    oracle = CountingOracle(synthetic())
    searches.make("nsga2").run(oracle, 1000, seed=0)
    assert oracle.calls == 1000


@pytest.mark.parametrize("engine", ["pymoo", "fast"])
def test_initial_population_is_distinct(engine):
    p = searches.make("nsga2", engine=engine).run(TableOracle(synthetic()), 500, seed=1)
    assert len(np.unique(p[:110])) == 110


def auc(proposals, obj):
    return auc_recall(recall_curve(proposals[first_sightings(proposals)], obj.pstar, obj.lattice.size))


def test_nsga2_beats_random_on_a_structured_table():
    obj = synthetic(seed=1)
    nsga = np.mean([auc(searches.make("nsga2", engine="fast").run(TableOracle(obj), 6480, s), obj) for s in range(5)])
    rand = np.mean([auc(searches.make("random").run(TableOracle(obj), 6480, s), obj) for s in range(5)])
    assert nsga > rand + 0.05


def test_random_search_is_a_permutation_then_repeats():
    obj = synthetic(n=2, levels=4)
    p = searches.make("random").run(TableOracle(obj), 40, seed=0)
    assert sorted(p[:16].tolist()) == list(range(16))
    assert len(p) == 40 and first_sightings(p).sum() == 16


def test_greedy_moves_only_to_strictly_better_neighbours():
    obj = synthetic(n=3, levels=5, seed=2)
    s = np.minimum(obj.delta, obj.rho)
    lat = obj.lattice
    p = searches.make("greedy").run(TableOracle(obj), 600, seed=0)
    # replay the proposals: a block of neighbours follows each centre
    i, centre, restarts, moves = 0, None, 0, 0
    while i < len(p):
        if centre is None:
            centre, i = p[i], i + 1
            restarts += 1
            continue
        t = lat.theta(centre)
        nbrs = [
            lat.index(t + d)
            for d in np.r_[-np.eye(3, dtype=int), np.eye(3, dtype=int)]
            .reshape(2, 3, 3)
            .transpose(1, 0, 2)
            .reshape(6, 3)
            if ((t + d >= 0) & (t + d < 5)).all()
        ]
        block = p[i : i + len(nbrs)]
        assert block.tolist() == nbrs[: len(block)]  # exactly the ±1 neighbours, dimension order, − before +
        i += len(block)
        best = block[np.argmax(s[block])]
        if s[best] > s[centre]:
            centre, moves = best, moves + 1
        else:
            assert s[block].max() <= s[centre]  # restarts only at a local optimum
            centre = None
    assert restarts > 1 and moves > restarts


@pytest.mark.parametrize("engine", ["pymoo", "fast"])
def test_ga_ranks_by_min_of_delta_and_rho(engine):
    obj = synthetic(seed=3)
    s = np.minimum(obj.delta, obj.rho)
    same_s = Objectives(obj.lattice, s, s)  # different (δ, ρ), identical s
    swapped = Objectives(obj.lattice, obj.rho, obj.delta)
    run = lambda o: searches.make("ga", engine=engine).run(TableOracle(o), 800, seed=2)  # noqa: E731
    assert np.array_equal(run(obj), run(same_s)) and np.array_equal(run(obj), run(swapped))
    assert not np.array_equal(
        searches.make("nsga2", engine=engine).run(TableOracle(obj), 800, 2),
        searches.make("nsga2", engine=engine).run(TableOracle(same_s), 800, 2),
    )


@pytest.mark.parametrize("engine", ["pymoo", "fast"])
def test_delta_only_ignores_rho(engine):
    obj = synthetic(seed=4)
    scrambled = Objectives(obj.lattice, obj.delta, np.random.default_rng(0).permutation(obj.rho))
    run = lambda o: searches.make("nsga2", objectives=["delta"], engine=engine).run(TableOracle(o), 800, seed=1)  # noqa: E731
    assert np.array_equal(run(obj), run(scrambled))


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(pop_size=2000), r"exceeds \|Θ\|=1296"),
        (dict(pop_size=1), "at least 2"),
        (dict(eta_c=0), r"eta_c=0.0: the distribution index must be > 0"),
        (dict(eta_m=-1), "eta_m=-1.0"),
        (dict(engine="numba"), r"engine=numba \(valid: pymoo, fast\)"),
        (dict(p_mutation=1.5), "p_mutation=1.5"),
    ],
)
def test_bad_parameters(kwargs, pattern):
    with pytest.raises(UserError, match=pattern):
        searches.make("nsga2", **kwargs).run(TableOracle(synthetic()), 6480, 0)


def test_population_larger_than_budget():
    with pytest.raises(UserError, match="exceeds budget=50"):
        searches.make("nsga2").run(TableOracle(synthetic()), 50, 0)


def test_signal_missing_from_table():
    with pytest.raises(UserError, match="no signal 'nac'"):
        searches.make("nsga2", objectives=["nac"]).run(TableOracle(synthetic()), 500, 0)


@pytest.mark.parametrize("n,levels", [(1, 2), (1, 3), (2, 2), (3, 2), (2, 3), (1, 10)])
@pytest.mark.parametrize("name", ["nsga2", "ga", "delta_only"])
def test_a_small_lattice_is_covered_without_spinning(name, n, levels, monkeypatch):
    """On a lattice of ≤ 10 configurations the population's offspring are soon all copies of it, which
    duplicate elimination removes: after MAX_EMPTY_GENERATIONS empty generations unseen configurations
    join as immigrants, and the run ends at an empty generation once all of Θ is measured (a 2-configuration
    lattice spun through 1,000 empty generations)."""
    from pymoo.core.algorithm import Algorithm

    from testnav.searches.evolution import MAX_EMPTY_GENERATIONS

    asks = []
    ask = Algorithm.ask
    monkeypatch.setattr(Algorithm, "ask", lambda self: asks.append(1) or ask(self))
    obj = synthetic(n, levels)
    search = SEARCHES[name]()
    search.fit(obj.lattice, 40)
    p = search.run(TableOracle(obj), 40, seed=0)
    # the budget spent, or ended early with every configuration measured; never a run of empty generations
    assert len(p) == 40 or (len(p) < 40 and set(p.tolist()) == set(range(obj.lattice.size)))
    assert len(asks) <= len(p) + MAX_EMPTY_GENERATIONS * obj.lattice.size <= len(p) + 10 * obj.lattice.size
