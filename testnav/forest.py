"""A bootstrapped regression forest that is, tree for tree, the one scikit-learn's
`RandomForestRegressor(bootstrap=True, max_features=1.0)` fits: the same per-tree seeds drawn
from the forest's seed, the same bootstrap draws (as sample counts), the same
`DecisionTreeRegressor` trees, so the same predictions to the bit (tests check it against
sklearn). What it leaves out is sklearn's per-tree Python overhead (cloning the template
estimator, introspecting its parameters twice, joblib dispatch), which is most of a refit for
the small forests TomoNav and the stopping certificate fit dozens of times per run: fits
1.1–1.5× faster (docs/tomonav.md).
"""

from __future__ import annotations

import numpy as np
from sklearn import config_context
from sklearn.tree import DecisionTreeRegressor

MAX_INT = np.iinfo(np.int32).max  # sklearn's bound for the per-tree seeds


class BootstrapForest:
    """`estimators_` (the fitted trees) and `estimators_samples_` (each tree's bootstrap draws,
    repeats included) as sklearn's forest names them; `max_samples` (None: as many draws as
    points, an int: that many) may be changed between fits."""

    def __init__(self, n_estimators: int, min_samples_leaf: int = 1, random_state: int = 0, max_samples=None):
        self.n_estimators, self.min_samples_leaf = int(n_estimators), int(min_samples_leaf)
        self.random_state, self.max_samples = int(random_state), max_samples
        self.estimators_: list[DecisionTreeRegressor] = []
        self.estimators_samples_: list[np.ndarray] = []

    def fit(self, X, y) -> "BootstrapForest":
        X = np.ascontiguousarray(X, dtype=np.float32)  # the trees' own input type
        y = np.asarray(y, dtype=np.float64)
        y = np.ascontiguousarray(y.reshape(len(y), -1))
        n = len(X)
        draws = n if self.max_samples is None else int(self.max_samples)
        # one seed per tree, drawn in order from the forest's generator (sklearn: _set_random_states)
        forest_rng = np.random.RandomState(self.random_state)
        seeds = [forest_rng.randint(MAX_INT) for _ in range(self.n_estimators)]
        self.estimators_, self.estimators_samples_ = [], []
        with config_context(skip_parameter_validation=True):  # the settings are fixed above
            for seed in seeds:
                drawn = np.random.RandomState(seed).randint(0, n, draws)  # sklearn: _generate_sample_indices
                tree = DecisionTreeRegressor(
                    max_features=1.0, min_samples_leaf=self.min_samples_leaf, random_state=seed
                )
                tree.fit(X, y, sample_weight=np.bincount(drawn, minlength=n), check_input=False)
                self.estimators_.append(tree)
                self.estimators_samples_.append(drawn)
        return self
