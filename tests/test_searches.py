import numpy as np
import pytest

from testnav.errors import UserError
from testnav.lattice import Lattice
from testnav.oracle import TableOracle
from testnav.recall import first_sightings
from testnav.searches.nsga2 import NSGA2Search
from testnav.searches.random_search import RandomSearch
from testnav.table import Objectives, minmax


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
        self.calls = []

    def evaluate(self, indices):
        self.calls.append(np.asarray(indices).copy())
        return super().evaluate(indices)


@pytest.mark.parametrize("budget", [110, 1000, 6480])
def test_nsga2_spends_exactly_the_budget(budget):
    oracle = CountingOracle(synthetic())
    proposals = NSGA2Search(eliminate_duplicates=False).run(oracle, budget, seed=0)
    assert len(proposals) == budget
    assert sum(len(c) for c in oracle.calls) == budget  # pymoo's n_eval would overshoot 1000 (μ ∤ B − μ)


def test_nsga2_initial_population_is_distinct_and_seeded():
    obj = synthetic()
    a = NSGA2Search().run(TableOracle(obj), 1296, seed=4)
    b = NSGA2Search().run(TableOracle(obj), 1296, seed=4)
    c = NSGA2Search().run(TableOracle(obj), 1296, seed=5)
    assert len(np.unique(a[:110])) == 110
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() < obj.lattice.size


def test_nsga2_beats_random_on_a_structured_table():
    from testnav.recall import auc_recall, recall_curve

    obj = synthetic(seed=1)

    def auc(search, seed):
        p = search.run(TableOracle(obj), 6480, seed)
        return auc_recall(recall_curve(p[first_sightings(p)], obj.pstar, obj.lattice.size))

    nsga = np.mean([auc(NSGA2Search(), s) for s in range(3)])
    rand = np.mean([auc(RandomSearch(), s) for s in range(3)])
    assert nsga > rand + 0.05


def test_random_search_is_a_permutation_then_repeats():
    obj = synthetic(n=2, levels=4)
    p = RandomSearch().run(TableOracle(obj), 40, seed=0)
    assert sorted(p[:16].tolist()) == list(range(16))
    assert len(p) == 40 and first_sightings(p).sum() == 16


@pytest.mark.parametrize("pop, budget, pattern", [(2000, 6480, r"exceeds \|Θ\|=1296"), (110, 50, "exceeds budget=50"),
                                                  (1, 6480, "at least 2")])
def test_bad_population_sizes(pop, budget, pattern):
    with pytest.raises(UserError, match=pattern):
        NSGA2Search(pop_size=pop).run(TableOracle(synthetic()), budget, 0)
