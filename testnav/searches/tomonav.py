"""TomoNav: tomography-guided Pareto search (beyond both papers; docs/tomonav.md).

TestNav spends evaluations to find P*; TestifAI predicts the whole tomography from the
cheap low-order tests. TomoNav combines them:

1. Initial design: every configuration of order ≤ `init_order` (TestifAI's measured
   tests; order ≤ 1 by default), plus `init_random` (15) drawn uniformly from the rest.
2. Surrogate (testnav/stopping/level_surrogate.py): for δ and ρ, a model of the levels fitted on everything evaluated so far —
   an additive main-effects model (least squares on one-hot levels, so it extrapolates to
   higher orders the way TestifAI's independence estimate does) plus a bootstrapped random
   forest on its residuals; the spread of the forest's trees is the uncertainty.
   `surrogate: forest` drops the additive part (a plain forest on the levels).
3. Batches: each unevaluated configuration gets the point μ + κ·σ (κ = 0 by default: the mean
   ranked best, chosen on generated tables; κ > 0 is optimism under uncertainty); it is ranked
   together with the *observed* values of the evaluated configurations (θ = 0 left out, as
   from P*) by non-dominated fronts, peeled one at a time. The next batch is the
   unevaluated members of the first front — the predicted non-dominated set not yet
   measured — by crowding distance (largest first), then those of the next front if the
   first has fewer than `batch`; then refit and repeat. When the predicted front holds no
   unmeasured configuration (the model believes P* found), the next batch is twice as large
   (`grow`), back to `batch` as soon as the front has candidates again.
4. Once Θ is exhausted, the rest of the budget re-proposes evaluated configurations (cache
   hits) in a seeded random order, so a run always makes exactly `budget` proposals.

Large lattices (|Θ| > `pool_above`, default 2,000; the lattices of both papers stay on the
exact path above): predicting every unmeasured θ each batch costs O(|Θ|) per refit and
loses to NSGA-II well before Θ stops fitting in memory. There the surrogate ranks only a
candidate pool (testnav/stopping/pool.py): the unit-step neighbours of the measured front, a few
mutations of each front member, the unmeasured predicted front of the last batch, and uniform
random fill, `pool` configurations in all; while the predicted front holds nothing unmeasured
(the batch doubling), the neighbours and mutations are those of the first `mop_fronts` measured
fronts instead, the band where a noisy P* lies, rather than a pool that is mostly uniform fill
evaluated whole. The batch grows with the configurations measured
(`batch_growth` of them per refit, so refits stay O(log budget)), the forest has at most
`pool_trees` trees on capped bootstraps (`max_samples`), and the initial design adds `n·(ℓ−1)` random configurations (it
scales with the lattice's main effects). No Θ-sized array is made, so it runs on a lattice that
is never tabulated (live).

Only `oracle.evaluate` is used, so it runs in replay and live alike. Deterministic per seed,
and the same on every machine: measured values, the additive coefficients and the
predictions are rounded to GRID before anything is fitted, ranked or compared.
"""

from __future__ import annotations

import numpy as np

from ..errors import UserError
from ..core.exact import on_grid
from ..core.lattice import Lattice
from ..core.pareto import crowding_distance, nondominated_mask
from ..stopping.level_surrogate import SURROGATES, Surrogate
from ..stopping.pool import candidate_pool, random_configurations
from . import Search


def next_batch(
    optimistic: np.ndarray, candidates: np.ndarray, observed: np.ndarray, size: int, with_front: bool = False
):
    """Up to `size` of `candidates` (lattice indices, optimistic points (m, 2)): the members of
    the first non-dominated front of candidates ∪ observed (points (o, 2)), largest crowding
    distance first, then the next front's, and so on. Ties in crowding go to the lower index.
    `with_front`: also return how many candidates the first front held."""
    pts = np.concatenate([optimistic, observed])
    is_cand = np.r_[np.ones(len(candidates), bool), np.zeros(len(observed), bool)]
    alive = np.ones(len(pts), bool)
    chosen: list[np.ndarray] = []
    need, on_front = size, None
    while need > 0 and (alive & is_cand).any():
        live = np.flatnonzero(alive)
        front = live[nondominated_mask(pts[live, 0], pts[live, 1])]
        cd = crowding_distance(pts[front][None], np.zeros((1, len(front)), np.int64))[0]
        mine = is_cand[front]
        f, c = front[mine], cd[mine]
        on_front = len(f) if on_front is None else on_front
        order = np.lexsort((candidates[f], -c))
        chosen.append(candidates[f[order[:need]]])
        need -= min(need, len(f))
        alive[front] = False
    out = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    return (out, on_front or 0) if with_front else out


class TomoNavSearch(Search):
    def __init__(
        self,
        name: str = "tomonav",
        init_order: int = 1,
        init_random: int = 15,
        batch: int = 10,
        kappa: float = 0.0,
        surrogate: str = "additive_forest",
        n_estimators: int = 50,
        min_samples_leaf: int = 1,
        ridge: float = 1e-3,
        grow: bool = True,
        pool_above: int = 2_000,
        pool: int = 2_000,
        batch_growth: float = 0.25,
        max_samples: int = 500,
        pool_trees: int = 25,
        mop_fronts: int = 8,
        label: str | None = None,
        style: dict | None = None,
    ):
        super().__init__(name, label, style)
        if surrogate not in SURROGATES:
            raise UserError(f"search.surrogate={surrogate} (valid: {', '.join(SURROGATES)})")
        for key, value, low in (
            ("init_order", init_order, -1),
            ("init_random", init_random, 0),
            ("batch", batch, 1),
            ("n_estimators", n_estimators, 1),
            ("min_samples_leaf", min_samples_leaf, 1),
            ("pool_above", pool_above, 1),
            ("pool", pool, 1),
            ("max_samples", max_samples, 1),
            ("pool_trees", pool_trees, 1),
            ("mop_fronts", mop_fronts, 1),
        ):
            if int(value) != value or value < low:
                raise UserError(f"search.{key}={value}: must be a whole number ≥ {low}")
        if not kappa >= 0:
            raise UserError(f"search.kappa={kappa}: the optimism weight must be ≥ 0")
        self.init_order, self.init_random, self.batch = int(init_order), int(init_random), int(batch)
        self.kappa, self.surrogate, self.grow = float(kappa), surrogate, bool(grow)
        self.forest_args = dict(
            n_estimators=int(n_estimators), min_samples_leaf=int(min_samples_leaf), ridge=float(ridge)
        )
        if not batch_growth >= 0:
            raise UserError(f"search.batch_growth={batch_growth}: must be ≥ 0")
        self.pool_above, self.pool, self.max_samples = int(pool_above), int(pool), int(max_samples)
        self.batch_growth, self.pool_trees = float(batch_growth), int(pool_trees)
        self.mop_fronts = int(mop_fronts)
        self.history: list[dict] = []  # one entry per refit: what was fitted and what it chose (for tests/diagnostics)

    def initial_design(self, lattice: Lattice, rng: np.random.Generator) -> np.ndarray:
        low = np.flatnonzero(lattice.orders <= self.init_order)
        rest = np.setdiff1d(np.arange(lattice.size), low)
        extra = rng.choice(rest, size=min(self.init_random, len(rest)), replace=False) if len(rest) else rest
        design = np.concatenate([low, np.sort(extra)]).astype(np.int64)
        if len(design) == 0:  # init_order=-1, init_random=0: start from one random configuration
            design = rng.choice(lattice.size, size=1)
        return design

    def _record(self, model, seen, candidates, chosen, on_front, mean, sd) -> None:
        """One refit's entry in `history`: what was fitted and what it chose (tests, diagnostics)."""
        pos = np.searchsorted(candidates, chosen)
        self.history.append(
            {
                "fit": model.fits,
                "evaluated": seen,
                "chosen": chosen,
                "on_front": on_front,
                "mean": mean[pos],
                "sd": sd[pos],
            }
        )

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        lattice = oracle.lattice
        if lattice.size > self.pool_above:
            return self.run_pooled(oracle, budget, seed)
        rng = np.random.default_rng(seed)
        self.history = []
        proposals = self.initial_design(lattice, rng)[:budget]
        values = np.full((lattice.size, 2), np.nan)
        values[proposals] = on_grid(oracle.evaluate(proposals, self.objectives))
        evaluated = np.zeros(lattice.size, bool)
        evaluated[proposals] = True
        out = [proposals]
        b = len(proposals)
        model = Surrogate(lattice, self.surrogate, seed=seed, **self.forest_args)
        size = self.batch
        while b < budget and not evaluated.all() and not oracle.stopped:
            seen = np.flatnonzero(evaluated)
            model.fit(seen, values[seen], calibrate=False)  # TomoNav ranks the mean: no conformal scores needed
            candidates = np.flatnonzero(~evaluated)
            mean, sd = model.predict(candidates)
            optimistic = on_grid(mean + self.kappa * sd)
            observed = values[seen[seen != 0]]  # θ = 0 is the clean reference, not on P*
            chosen, on_front = next_batch(optimistic, candidates, observed, min(size, budget - b), with_front=True)
            self._record(model, seen, candidates, chosen, on_front, mean, sd)
            # the predicted front holds nothing unmeasured: the model thinks P* is found, so the
            # rest is mop-up; double the batch (fewer refits) until the front has candidates again
            size = self.batch if on_front or not self.grow else 2 * size
            values[chosen] = on_grid(oracle.evaluate(chosen, self.objectives))
            evaluated[chosen] = True
            out.append(chosen)
            b += len(chosen)
        if b < budget and not oracle.stopped:  # Θ exhausted: repeats are cache hits, but still proposals
            reps = -(-(budget - b) // lattice.size)
            again = np.concatenate([rng.permutation(lattice.size) for _ in range(reps)])[: budget - b]
            oracle.evaluate(again, self.objectives)
            out.append(again)
        return np.concatenate(out).astype(np.int64)

    def run_pooled(self, oracle, budget: int, seed: int) -> np.ndarray:
        """The large-lattice path (module docstring): the same loop, ranking a candidate pool."""
        lattice = oracle.lattice
        rng = np.random.default_rng(seed)
        self.history = []
        low = _low_orders(lattice, self.init_order)
        extra = random_configurations(lattice, self.init_random + lattice.n * (lattice.levels - 1), rng, exclude=low)
        proposals = np.concatenate([low, extra]).astype(np.int64)[:budget]
        seen = proposals.copy()  # in order of evaluation
        # values as measured: the pool's fronts are read off them, because the grid (testnav/core/exact.py)
        # merges front members closer than 2⁻²⁴ (a δ saturating at 1 on a large lattice) and a
        # merged member's neighbours would never be pooled; comparisons alone need no grid (the same
        # values give the same fronts on every machine). The fit (Surrogate.fit puts its targets on
        # the grid) and the ranking use the grid.
        values = oracle.evaluate(proposals, self.objectives)
        out = [proposals]
        b = len(proposals)
        samples = None if budget <= self.max_samples else self.max_samples
        # κ = 0 ranks the mean, which 25 trees on 500-point bootstraps estimate about as well as 50 on all
        args = {**self.forest_args, "n_estimators": min(self.forest_args["n_estimators"], self.pool_trees)}
        model = Surrogate(lattice, self.surrogate, seed=seed, max_samples=samples, **args)
        carry = np.zeros(0, np.int64)
        grown = 1
        while b < budget and len(seen) < lattice.size and not oracle.stopped:
            model.fit(seen, values, calibrate=False)  # the conformal scores serve the certificate only
            keep = seen != 0  # θ = 0 is the clean reference, not on P*
            # while the predicted front holds nothing unmeasured, the pool is drawn around the
            # first `mop_fronts` measured fronts: the band near P*, not uniform fill
            fronts = 1 if grown == 1 else self.mop_fronts
            candidates = candidate_pool(lattice, seen, values, carry, self.pool, rng, fronts)
            if len(candidates) == 0:
                break
            mean, sd = model.predict(candidates)
            optimistic = on_grid(mean + self.kappa * sd)
            size = grown * max(self.batch, int(self.batch_growth * len(seen)))
            observed = on_grid(values[keep])
            chosen, on_front = next_batch(optimistic, candidates, observed, min(size, budget - b), with_front=True)
            front = next_batch(optimistic, candidates, observed, on_front)
            carry = np.setdiff1d(front, chosen)  # predicted front, not yet measured: rank it again
            self._record(model, seen, candidates, chosen, on_front, mean, sd)
            grown = 1 if on_front or not self.grow else 2 * grown
            values = np.concatenate([values, oracle.evaluate(chosen, self.objectives)])
            seen = np.concatenate([seen, chosen])
            out.append(chosen)
            b += len(chosen)
        if (
            b < budget and not oracle.stopped
        ):  # Θ exhausted (or nothing left to rank): repeats are cache hits, but still proposals
            again = rng.choice(np.unique(seen), size=budget - b)
            oracle.evaluate(again, self.objectives)
            out.append(again)
        return np.concatenate(out).astype(np.int64)


def _low_orders(lattice: Lattice, order: int) -> np.ndarray:
    """Indices of every θ of order ≤ `order`, sorted, enumerated without Θ."""
    from itertools import combinations, product

    out = [0] if order >= 0 else []
    weights = lattice.levels ** np.arange(lattice.n - 1, -1, -1, dtype=np.int64)
    for k in range(1, min(order, lattice.n) + 1):
        for fams in combinations(range(lattice.n), k):
            for lv in product(range(1, lattice.levels), repeat=k):
                out.append(int(np.dot(weights[list(fams)], lv)))
    return np.unique(np.asarray(out, dtype=np.int64))
