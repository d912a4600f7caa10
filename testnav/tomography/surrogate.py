"""The partial-tomography surrogate (§4.3): a random forest from severity levels to outcomes.

Robustness: `RandomForestClassifier` with the paper's settings (100 trees, no bootstrap, all
features at every split, log-loss criterion) on (σ, per-input outcome) pairs; r̂_σ is the
predicted probability of a pass. Training rows are aggregated to one row per (σ, outcome)
with the count as sample weight: without bootstrap, weighted impurities and leaf
frequencies are exactly those of the expanded data (a node holding a single σ cannot be
split either way), and training is ~500× cheaper. Quality q_σ (§6) uses the regressor twin
on one value per measured σ.

Both forests see exact inputs, so they grow the same trees on every machine: levels are
small integers, the counts are integers, and the quality targets are rounded to 2⁻²⁴ of
their scale (testnav/core/exact.py), far below any meaningful difference in q_σ and far above the
last-digit noise a ground truth's KID carries between machines.
"""

from __future__ import annotations

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from ..core.exact import relative_grid
from ..core.lattice import Lattice

FOREST = dict(n_estimators=100, bootstrap=False, max_features=None)


class RobustnessSurrogate:
    def __init__(self, seed: int = 0, n_jobs: int = 1):
        self.forest = RandomForestClassifier(criterion="log_loss", random_state=seed, n_jobs=n_jobs, **FOREST)

    def fit(self, lattice: Lattice, tests: dict) -> RobustnessSurrogate:
        """tests: lattice index -> observed outcomes (bool array)."""
        idx = np.array(sorted(tests), dtype=np.int64)
        passes = np.array([int(np.sum(tests[i])) for i in idx])
        totals = np.array([len(tests[i]) for i in idx])
        x = np.concatenate([lattice.theta(idx), lattice.theta(idx)])
        y = np.r_[np.ones(len(idx), int), np.zeros(len(idx), int)]
        w = np.r_[passes, totals - passes].astype(float)
        keep = w > 0
        self.forest.fit(x[keep], y[keep], sample_weight=w[keep])
        self.lattice = lattice
        return self

    def predict(self, indices=None) -> np.ndarray:
        idx = np.arange(self.lattice.size) if indices is None else np.asarray(indices)
        proba = self.forest.predict_proba(self.lattice.theta(idx))
        classes = list(self.forest.classes_)
        return proba[:, classes.index(1)] if 1 in classes else np.zeros(len(idx))


class ScoreSurrogate:
    """Any per-configuration score (KID, BERT-F1, …) regressed from the measured tests."""

    def __init__(self, seed: int = 0, n_jobs: int = 1):
        self.forest = RandomForestRegressor(random_state=seed, n_jobs=n_jobs, **FOREST)

    def fit(self, lattice: Lattice, indices, values) -> ScoreSurrogate:
        self.lattice = lattice
        self.forest.fit(lattice.theta(np.asarray(indices)), relative_grid(values))
        return self

    def predict(self, indices=None) -> np.ndarray:
        idx = np.arange(self.lattice.size) if indices is None else np.asarray(indices)
        return self.forest.predict(self.lattice.theta(idx))


class AdditiveLogitSurrogate:
    """r̂_σ from the measured tests of order ≤ 2 alone, added up on the logit scale: the clean test's
    logit, each active family's main effect (its first-order test against the clean one) and each
    pair's interaction (its second-order test against the two main effects). A second-order
    expansion, so a third- or fourth-order test is predicted to lose what its families and pairs
    lose together, where the forest, which never saw a test of that order, cannot go below its
    training tests (docs/readings.md, "Query bounds"). Needs every test of order ≤ 2 measured."""

    def __init__(self, seed: int = 0):
        self.seed = seed  # unused: the expansion is exact arithmetic on the measured tests

    def fit(self, lattice: Lattice, tests: dict) -> AdditiveLogitSurrogate:
        theta = lattice.tuples
        active = theta > 0
        order = active.sum(axis=1)
        low = np.flatnonzero(order <= 2)
        missing = [int(i) for i in low if int(i) not in tests]
        if missing:
            raise ValueError(f"the additive surrogate needs every test of order ≤ 2 ({len(missing)} unmeasured)")
        logit = np.full(lattice.size, np.nan)
        for i in low:
            v = np.asarray(tests[int(i)], float)
            p = (v.sum() + 0.5) / (len(v) + 1)  # the add-half estimate: finite at 0 and 1
            logit[i] = np.log(p / (1 - p))
        clean = logit[0]
        main = np.zeros((lattice.n, lattice.levels))  # main[f, level]
        for i in np.flatnonzero(order == 1):
            f = int(np.flatnonzero(active[i])[0])
            main[f, theta[i, f]] = logit[i] - clean
        pred = np.full(lattice.size, clean)
        for f in range(lattice.n):
            pred += main[f, theta[:, f]]
        for i in np.flatnonzero(order == 2):
            f, g = np.flatnonzero(active[i])
            inter = logit[i] - clean - main[f, theta[i, f]] - main[g, theta[i, g]]
            pred[(theta[:, f] == theta[i, f]) & (theta[:, g] == theta[i, g])] += inter
        self.lattice, self.r = lattice, 1 / (1 + np.exp(-pred))
        return self

    def predict(self, indices=None) -> np.ndarray:
        return self.r if indices is None else self.r[np.asarray(indices)]
