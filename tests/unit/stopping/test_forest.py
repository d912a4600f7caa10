"""testnav/stopping/forest.py against the reference it replaces: sklearn's RandomForestRegressor."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor

from testnav.stopping import forest
from testnav.stopping.forest import BootstrapForest


def test_this_sklearn_builds_through_its_cython_builder():
    assert forest.BUILD is forest.grow  # else every fit silently pays sklearn's per-tree overhead


@pytest.mark.parametrize("build", ["grow", "reference_tree"])
@pytest.mark.parametrize(
    "n, outputs, max_samples, leaf",
    [(300, 2, None, 1), (900, 2, 200, 1), (40, 1, None, 3), (25, 2, 25, 1)],
)
def test_tree_for_tree_sklearns_forest(n, outputs, max_samples, leaf, build, monkeypatch):
    monkeypatch.setattr(forest, "BUILD", getattr(forest, build))
    rng = np.random.default_rng(n)
    x = rng.integers(0, 6, (n, 5)).astype(float)  # lattice levels, as the surrogate fits them
    y = rng.normal(size=(n, outputs)) if outputs > 1 else rng.normal(size=n)
    probe = rng.integers(0, 6, (500, 5)).astype(np.float32)
    ref = RandomForestRegressor(
        n_estimators=20,
        bootstrap=True,
        max_features=1.0,
        min_samples_leaf=leaf,
        max_samples=max_samples,
        random_state=11,
        n_jobs=1,
    ).fit(x, y)
    ours = BootstrapForest(20, leaf, 11, max_samples).fit(x, y)
    assert len(ours.estimators_) == 20
    for a, b in zip(ref.estimators_, ours.estimators_):
        assert np.array_equal(a.predict(probe), b.predict(probe))  # to the bit
        assert a.tree_.node_count == b.tree_.node_count
    for a, b in zip(ref.estimators_samples_, ours.estimators_samples_):
        assert np.array_equal(a, b)
    assert np.array_equal(ref.predict(probe), np.mean([t.predict(probe) for t in ours.estimators_], axis=0))


def test_refit_with_another_bootstrap_size_starts_afresh():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, (200, 3)).astype(float), rng.normal(size=(200, 2))
    forest = BootstrapForest(5, 1, 3).fit(x, y)
    forest.max_samples = 50
    forest.fit(x[:100], y[:100])
    assert len(forest.estimators_) == 5
    assert all(len(s) == 50 and s.max() < 100 for s in forest.estimators_samples_)


def test_trees_grown_on_threads_are_the_trees_grown_in_turn(monkeypatch):
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 6, (600, 4)).astype(float), rng.normal(size=(600, 2))
    probe = rng.integers(0, 6, (300, 4)).astype(np.float32)
    fits = {}
    for threads in ("1", "3"):
        monkeypatch.setenv("TESTNAV_TREE_THREADS", threads)
        assert forest.tree_threads() == int(threads)
        fits[threads] = BootstrapForest(12, 1, 9).fit(x, y)
    one, three = fits["1"], fits["3"]
    for a, b in zip(one.estimators_, three.estimators_):
        assert np.array_equal(a.predict(probe), b.predict(probe))
        assert a.tree_.node_count == b.tree_.node_count
    for a, b in zip(one.estimators_samples_, three.estimators_samples_):
        assert np.array_equal(a, b)


def test_per_tree_predictions_on_threads_are_each_trees_own(monkeypatch):
    rng = np.random.default_rng(6)
    x, y = rng.integers(0, 6, (400, 4)).astype(float), rng.normal(size=(400, 2))
    fitted = BootstrapForest(8, 1, 2).fit(x, y)
    probe = np.ascontiguousarray(rng.integers(0, 6, (forest.PREDICT_THREADED_FROM + 5, 4)), dtype=np.float32)
    want = np.stack([t.predict(probe) for t in fitted.estimators_])
    for threads in ("1", "3"):
        monkeypatch.setenv("TESTNAV_TREE_THREADS", threads)
        assert np.array_equal(fitted.per_tree(probe), want)
