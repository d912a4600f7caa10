"""A bootstrapped regression forest that is, tree for tree, the one scikit-learn's
`RandomForestRegressor(bootstrap=True, max_features=1.0)` fits: the same per-tree seeds drawn
from the forest's seed, the same bootstrap draws (as sample counts), the same trees, so the
same predictions to the bit (tests check it against sklearn). What it leaves out is sklearn's
per-tree Python overhead (cloning the template estimator, introspecting its parameters,
joblib dispatch, validating inputs and weights again for every tree), which is most of a refit
for the small forests TomoNav and the stopping certificate fit dozens of times per run.

Trees are grown, and predict, on the process's cores (sklearn's builder and tree walk release
the GIL): each tree's streams come from its own seed, so the forest is the same whichever thread
grows which tree, and a fit on two cores takes about half the time.

Each tree is grown by sklearn's own Cython builder, set up as `DecisionTreeRegressor._fit`
sets it up for these settings (`grow`). That builder is not public API, so at import a
two-point check compares it with `DecisionTreeRegressor.fit`; if the classes are missing or
disagree (another sklearn), every tree goes through `DecisionTreeRegressor` instead: slower,
the same trees.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn import config_context
from sklearn.tree import DecisionTreeRegressor

try:  # sklearn's tree builder: not public API (see _builder_agrees)
    from sklearn.tree._criterion import MSE
    from sklearn.tree._splitter import BestSplitter
    from sklearn.tree._tree import DepthFirstTreeBuilder, Tree
except ImportError:
    MSE = BestSplitter = DepthFirstTreeBuilder = Tree = None

MAX_INT = np.iinfo(np.int32).max  # sklearn's bound for the per-tree seeds and the depth limit
THREADED_FROM = 200  # points: below this a tree takes about as long as handing it to a thread
PREDICT_THREADED_FROM = 1_000  # rows: the same for a tree's prediction


def tree_threads() -> int:
    """Threads that grow a forest's trees: TESTNAV_TREE_THREADS if set (the scaling study sets 1,
    one core per run), else the cores this process may use."""
    return max(1, int(os.environ.get("TESTNAV_TREE_THREADS") or len(os.sched_getaffinity(0))))


def map_trees(fn, items: list, threaded: bool) -> list:
    """[fn(item) for item in items], in order, on `tree_threads()` threads where `threaded`."""
    threads = min(tree_threads(), len(items)) if threaded else 1
    if threads <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, items))  # in order, whichever thread ran each


_local = threading.local()


def thread_generator() -> np.random.RandomState:
    """This thread's RandomState, for the caller to seed (one per thread: trees grow side by side)."""
    rs = getattr(_local, "rs", None)
    if rs is None:
        rs = _local.rs = np.random.RandomState()
    return rs


class FittedTree:
    """One fitted tree: `predict` as DecisionTreeRegressor's (float32 C-contiguous input, which
    `BootstrapForest.fit` and the surrogate already hand it), `tree_` the fitted structure."""

    def __init__(self, tree_):
        self.tree_ = tree_

    def predict(self, X) -> np.ndarray:
        out = self.tree_.predict(X)  # (n, 1) for one output, else (n, outputs, 1)
        return out[:, 0] if self.tree_.n_outputs == 1 else out[:, :, 0]


def grow(X, y, weight, min_samples_leaf: int, random_state: np.random.RandomState):
    """sklearn's builder for `DecisionTreeRegressor(max_features=1.0, min_samples_leaf, random_state)`
    (squared error, best splitter, depth-first, no depth or leaf limit, no pruning). The splitter
    draws its own seed from `random_state` once, when the build starts."""
    n, features = X.shape
    outputs = y.shape[1]
    splitter = BestSplitter(MSE(outputs, n), features, min_samples_leaf, 0.0, random_state, None)
    tree = Tree(features, np.ones(outputs, dtype=np.intp), outputs)
    builder = DepthFirstTreeBuilder(splitter, max(2, 2 * min_samples_leaf), min_samples_leaf, 0.0, MAX_INT, 0.0)
    builder.build(tree, X, y, weight, None)
    return FittedTree(tree)


def reference_tree(X, y, weight, min_samples_leaf: int, random_state: np.random.RandomState):
    """The same tree through sklearn's public estimator."""
    with config_context(skip_parameter_validation=True):  # the settings are fixed here
        tree = DecisionTreeRegressor(max_features=1.0, min_samples_leaf=min_samples_leaf, random_state=random_state)
        return tree.fit(X, y, sample_weight=weight, check_input=False)


def _builder_agrees() -> bool:
    """Whether `grow` builds DecisionTreeRegressor's tree on this sklearn (a two-output toy)."""
    rng = np.random.RandomState(0)
    X = np.ascontiguousarray(rng.randint(0, 4, (40, 3)), dtype=np.float32)
    y = np.ascontiguousarray(rng.normal(size=(40, 2)))
    w = np.bincount(rng.randint(0, 40, 40), minlength=40).astype(np.float64)
    if Tree is None:
        return False
    try:
        ours = grow(X, y, w, 1, np.random.RandomState(7))
    except (TypeError, ValueError):
        return False
    ref = reference_tree(X, y, w, 1, np.random.RandomState(7))
    return ours.tree_.node_count == ref.tree_.node_count and np.array_equal(ours.predict(X), ref.predict(X))


BUILD = grow if _builder_agrees() else reference_tree


class BootstrapForest:
    """`estimators_` (the fitted trees) and `estimators_samples_` (each tree's bootstrap draws,
    repeats included) as sklearn's forest names them; `max_samples` (None: as many draws as
    points, an int: that many) may be changed between fits."""

    def __init__(self, n_estimators: int, min_samples_leaf: int = 1, random_state: int = 0, max_samples=None):
        self.n_estimators, self.min_samples_leaf = int(n_estimators), int(min_samples_leaf)
        self.random_state, self.max_samples = int(random_state), max_samples
        self.estimators_: list = []
        self.estimators_samples_: list[np.ndarray] = []

    def fit(self, X, y) -> BootstrapForest:
        X = np.ascontiguousarray(X, dtype=np.float32)  # the trees' own input type
        y = np.asarray(y, dtype=np.float64)
        y = np.ascontiguousarray(y.reshape(len(y), -1))
        n = len(X)
        draws = n if self.max_samples is None else int(self.max_samples)
        # one seed per tree, drawn in order from the forest's generator (sklearn: _set_random_states)
        forest_rng = np.random.RandomState(self.random_state)
        seeds = [forest_rng.randint(MAX_INT) for _ in range(self.n_estimators)]

        def one(seed):
            # sklearn makes a RandomState(seed) for each tree's draws and another for its
            # splitter; one generator seeded twice gives the same two streams. It is the
            # thread's own, reseeded: reseeding costs 2 µs, a new RandomState about 140 µs and a
            # slower build after it (a 30-tree fit on 1,296 points at one thread: 42 against 55 ms)
            rs = thread_generator()
            rs.seed(seed)
            drawn = rs.randint(0, n, draws)  # sklearn: _generate_sample_indices
            weight = np.bincount(drawn, minlength=n).astype(np.float64)
            rs.seed(seed)
            return BUILD(X, y, weight, self.min_samples_leaf, rs), drawn

        grown = map_trees(one, seeds, n >= THREADED_FROM)
        self.estimators_ = [tree for tree, _ in grown]
        self.estimators_samples_ = [drawn for _, drawn in grown]
        return self

    def per_tree(self, X) -> np.ndarray:
        """(trees, n[, outputs]): each tree's prediction of the float32 C-contiguous rows X, the
        trees split over the cores when X is large (sklearn's tree walk releases the GIL)."""
        return np.stack(map_trees(lambda t: t.predict(X), self.estimators_, len(X) >= PREDICT_THREADED_FROM))
