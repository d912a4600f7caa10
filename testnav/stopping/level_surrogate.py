"""The level surrogate shared by TomoNav (what to measure next) and the stopping certificate
(how likely P* is complete): per objective, a model of the levels fitted on the evaluated
configurations, with a conformally calibrated uncertainty (docs/tomonav.md, docs/certificate.md).

`additive_forest` is an additive main-effects model (least squares on one-hot levels, so it
extrapolates to higher orders the way TestifAI's independence estimate does) plus a bootstrapped
random forest on its residuals; `forest` is the plain forest on the levels. Measured values, the
additive coefficients and the predictions lie on GRID (testnav/core/exact.py), so fits, rankings and
draws are the same on every machine.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from ..core.exact import on_grid
from ..core.lattice import Lattice
from .forest import BootstrapForest

SURROGATES = ("additive_forest", "forest")
MIN_GROUP = 20  # conformal scores per order group at least (Surrogate.groups)


class Surrogate:
    """Per-objective mean and uncertainty over Θ from the evaluated configurations."""

    def __init__(
        self,
        lattice: Lattice,
        kind: str = "additive_forest",
        n_estimators: int = 50,
        min_samples_leaf: int = 1,
        ridge: float = 1e-3,
        seed: int = 0,
        max_samples: int | None = None,
    ):
        """`max_samples`: each tree's bootstrap draws at most this many of the measured points
        (None: as many as there are), so a refit costs the same however many are measured."""
        self.lattice, self.kind, self.ridge = lattice, kind, float(ridge)
        self.max_samples = max_samples
        # sklearn's RandomForestRegressor(bootstrap=True, max_features=1.0), tree for tree, at less
        # overhead per tree (testnav/stopping/forest.py)
        self.forest = BootstrapForest(n_estimators, min_samples_leaf, seed)
        self.fits = 0

    def onehot(self, indices) -> np.ndarray:
        """Main-effect design rows of `indices`: an intercept, then column (i, level) for each
        family i and level ≥ 1. Built per row, so no Θ-sized array is ever made."""
        x = self.lattice.theta(np.asarray(indices, dtype=np.int64))
        levels = np.arange(1, self.lattice.levels)[None]
        return np.concatenate(
            [np.ones((len(x), 1))] + [(x[:, [i]] == levels).astype(float) for i in range(self.lattice.n)], axis=1
        )

    def fit(self, indices, values, calibrate: bool = True) -> Surrogate:
        """`calibrate`: also compute the conformal scores (what `draws` and `interval` need;
        `predict` does not). Targets, coefficients and so residuals lie on GRID (testnav/core/exact.py): a.T @ y is then
        an exact sum, the solve's last bits (which depend on the LAPACK kernel) are rounded
        away, and the forest is trained on the same bits on every machine, so its split ties
        are exact and go the same way everywhere."""
        idx = np.asarray(indices, dtype=np.int64)
        y = on_grid(values)
        if self.kind == "additive_forest":
            a = self.onehot(idx)
            reg = self.ridge * np.eye(a.shape[1])
            reg[0, 0] = 0.0  # no shrinkage of the intercept
            self.gram = a.T @ a + reg  # one-hot counts plus the ridge: symmetric positive definite
            self.coef: np.ndarray | None = on_grid(np.linalg.solve(self.gram, a.T @ y))
            resid = y - a @ self.coef  # exact: every term is a multiple of GRID
        else:
            self.coef = None
            resid = y
        if self.max_samples is not None:
            self.forest.max_samples = min(self.max_samples, len(idx))
        self.forest.fit(self.lattice.theta(idx), resid)
        self.fits += 1
        if calibrate:
            self._calibrate(idx, y, resid)
        return self

    def _calibrate(self, idx, y, resid) -> None:
        """Conformal scores from the bootstrap (jackknife+-after-bootstrap, Kim, Xu & Barber 2020):
        the trees whose bootstrap left a measured point out never saw it, so their mean and
        spread predict it as the forest predicts an unmeasured θ — an honest residual, in units
        of σ, for free (no refit). The additive part is left out exactly (ridge hat matrix)."""
        trees = self.forest.estimators_
        x = np.ascontiguousarray(self.lattice.theta(idx), dtype=np.float32)
        per_tree = self.forest.per_tree(x).reshape(len(trees), len(idx), -1)
        oob = np.ones((len(trees), len(idx), 1), bool)
        for t, s in enumerate(self.forest.estimators_samples_):
            oob[t, s] = False
        count = oob.sum(0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (per_tree * oob).sum(0) / count
            sd = np.sqrt((((per_tree - mean) ** 2) * oob).sum(0) / count)
        pred = mean + (y - resid)
        if self.coef is not None:
            a = self.onehot(idx)
            h = np.einsum("ij,ij->i", np.linalg.solve(self.gram, a.T).T, a)
            pred = pred - resid * (h / np.maximum(1 - h, 1e-9))[:, None]
        ok = count[:, 0] > 1
        self.sd_floor = max(float(np.nanmedian(sd[ok])) * 0.05, 1e-9) if ok.any() else 1e-9
        # the out-of-bag mean averages ~37 % of the trees, a prediction all of them: take the
        # smaller average's extra variance out of the error, or the intervals come out too wide
        err = y - pred
        extra = sd**2 * (1 / np.maximum(count, 1) - 1 / len(trees))
        err = np.sign(err) * np.sqrt(np.maximum(err**2 - extra, 0))
        self.scores = (err / np.maximum(sd, self.sd_floor))[ok]  # (n', k), signed
        self.score_orders = self.lattice.order_of(idx)[ok]

    def groups(self, indices) -> list[tuple[np.ndarray, np.ndarray]]:
        """Mondrian conformal over the order of θ (how many families are active): (positions
        in `indices`, their scores) per order. The forest errs differently at different orders —
        it interpolates among measured single-family tests but extrapolates to orders 3–4 — and
        the measured points are rarely a random sample of Θ (TestifAI's low-order design, a
        search's trajectory), so scores pooled over all orders misstate the error at the orders
        still unmeasured (pooled: 68 % intervals 5–7 points off). Each order uses the scores of
        measured points of the same order, widened to the nearest orders until at least
        `MIN_GROUP` points (or all of them) are in."""
        orders = self.lattice.order_of(np.asarray(indices, dtype=np.int64))
        out = []
        for k in np.unique(orders):
            dist = np.abs(self.score_orders - k)
            take = np.ones(len(dist), bool)
            for r in range(self.lattice.n + 1):
                if (dist <= r).sum() >= min(MIN_GROUP, len(dist)):
                    take = dist <= r
                    break
            out.append((np.flatnonzero(orders == k), self.scores[take]))
        return out

    def draws(self, indices=None, mean=None, sd=None, samples: int = 200) -> np.ndarray:
        """(samples, m, k): μ + σ·e, e running evenly over the signed (δ, ρ) score pairs of θ's
        order group — the calibrated predictive distribution at each θ (its quantiles are the
        intervals; the stopping certificate samples it)."""
        if mean is None:
            mean, sd = self.predict(indices)
        idx = np.arange(self.lattice.size) if indices is None else indices
        groups = self.groups(idx)
        # each group's evenly spaced scores side by side, then one gather for every θ (a
        # scattered write per group into the (samples, m, k) array was most of a call)
        spaced = np.empty((samples, len(groups), mean.shape[1]))
        which = np.empty(len(mean), np.intp)
        for g, (pos, scores) in enumerate(groups):
            if len(scores) == 0:  # nothing calibrated yet: Gaussian quantiles of the trees' spread
                scores = np.repeat(ndtri((np.arange(samples) + 0.5) / samples)[:, None], mean.shape[1], axis=1)
            spaced[:, g] = scores[np.linspace(0, len(scores) - 1, samples).round().astype(int)]
            which[pos] = g
        e = np.take(spaced, which, axis=1)
        e *= np.maximum(sd, self.sd_floor)[None]  # μ + σ·e, in place (the same products and sums)
        e += mean[None]
        return e

    def interval(self, level: float, indices=None) -> tuple[np.ndarray, np.ndarray]:
        """Calibrated predictive interval (low, high), each (m, k), at the nominal `level`:
        μ ± q·σ, q the ⌈level·(n+1)⌉-th smallest |score| of θ's order group (split conformal);
        infinite while too few points are measured to reach that rank."""
        idx = np.arange(self.lattice.size) if indices is None else np.asarray(indices, dtype=np.int64)
        mean, sd = self.predict(idx)
        q = np.empty_like(mean)
        for pos, scores in self.groups(idx):
            z = np.sort(np.abs(scores), axis=0)
            rank = int(np.ceil(level * (len(z) + 1)))
            q[pos] = z[rank - 1] if 0 < rank <= len(z) else np.inf
        half = q * np.maximum(sd, self.sd_floor)
        return mean - half, mean + half

    def predict(self, indices=None) -> tuple[np.ndarray, np.ndarray]:
        """(mean, sd), each (m, k): sd is the spread of the forest's trees."""
        idx = np.arange(self.lattice.size) if indices is None else np.asarray(indices, dtype=np.int64)
        # float32, as the trees' own input check would make it (skipped: most of a small predict)
        x = np.ascontiguousarray(self.lattice.theta(idx), dtype=np.float32)
        per_tree = self.forest.per_tree(x)  # (trees, m[, k])
        if per_tree.ndim == 2:
            per_tree = per_tree[..., None]
        mean, sd = per_tree.mean(axis=0), per_tree.std(axis=0)
        if self.coef is not None:
            mean = mean + self.onehot(idx) @ self.coef
        return mean, sd
