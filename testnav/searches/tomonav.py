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

The settings are a frozen `TomoNavConfig` (conf/search/tomonav.yaml holds their defaults); the
two rankings are two strategies over one loop: `ExactRanking` (every unmeasured θ) and
`PooledRanking` (a candidate pool), chosen by the lattice's size. Only `oracle.evaluate` is used,
so it runs in replay and live alike. Deterministic per seed,
and the same on every machine: measured values, the additive coefficients and the
predictions are rounded to GRID before anything is fitted, ranked or compared.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from ..core.exact import on_grid
from ..core.lattice import Lattice
from ..core.pareto import crowding_distance, nondominated_mask
from ..errors import UserError
from ..stopping.level_surrogate import SURROGATES, Surrogate
from ..stopping.pool import candidate_pool, random_configurations
from . import Search


@dataclass(frozen=True)
class TomoNavConfig:
    """TomoNav's settings (conf/search/tomonav.yaml holds their defaults: `searches.make("tomonav")`).
    What each means: the YAML's comments and the module docstring."""

    init_order: int
    init_random: int
    batch: int
    kappa: float
    surrogate: str
    n_estimators: int
    min_samples_leaf: int
    ridge: float
    grow: bool
    pool_above: int
    pool: int
    batch_growth: float
    max_samples: int
    pool_trees: int
    mop_fronts: int

    def __post_init__(self):
        if self.surrogate not in SURROGATES:
            raise UserError(f"search.surrogate={self.surrogate} (valid: {', '.join(SURROGATES)})")
        for key, low in (
            ("init_order", -1),
            ("init_random", 0),
            ("batch", 1),
            ("n_estimators", 1),
            ("min_samples_leaf", 1),
            ("pool_above", 1),
            ("pool", 1),
            ("max_samples", 1),
            ("pool_trees", 1),
            ("mop_fronts", 1),
        ):
            value = getattr(self, key)
            if int(value) != value or value < low:
                raise UserError(f"search.{key}={value}: must be a whole number ≥ {low}")
        if not self.kappa >= 0:
            raise UserError(f"search.kappa={self.kappa}: the optimism weight must be ≥ 0")
        if not self.batch_growth >= 0:
            raise UserError(f"search.batch_growth={self.batch_growth}: must be ≥ 0")

    @property
    def forest(self) -> dict:
        """The surrogate's forest settings."""
        return dict(
            n_estimators=int(self.n_estimators), min_samples_leaf=int(self.min_samples_leaf), ridge=float(self.ridge)
        )


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


class Ranking:
    """The loop both strategies share: measure an initial design, then, until the budget is
    spent, Θ is exhausted or the oracle stops the run, refit the surrogate on what was measured
    and measure the next batch of the predicted front (`step`); once nothing is left to rank, the
    rest of the budget re-proposes measured configurations (cache hits, still proposals)."""

    def __init__(self, config: TomoNavConfig, objectives: tuple[str, ...], seed: int):
        self.config, self.objectives, self.seed = config, objectives, int(seed)
        self.rng = np.random.default_rng(seed)
        self.history: list[dict] = []  # one entry per refit: what was fitted and what it chose

    def run(self, oracle, budget: int) -> np.ndarray:
        lattice = oracle.lattice
        model = self.begin(lattice, budget)
        proposals = self.initial_design(lattice)[:budget]
        self.observe(proposals, oracle.evaluate(proposals, self.objectives))
        out = [proposals]
        b = len(proposals)
        while b < budget and self.left(lattice) and not oracle.stopped:
            chosen = self.step(model, lattice, budget - b)
            if chosen is None:
                break
            self.observe(chosen, oracle.evaluate(chosen, self.objectives))
            out.append(chosen)
            b += len(chosen)
        if b < budget and not oracle.stopped:  # nothing left to rank: repeats are cache hits, but still proposals
            again = self.repeats(lattice, budget - b)
            oracle.evaluate(again, self.objectives)
            out.append(again)
        return np.concatenate(out).astype(np.int64)

    def rank(self, model, candidates, observed, size):
        """The candidates' optimistic points μ + κ·σ, and `next_batch` of them against `observed`."""
        mean, sd = model.predict(candidates)
        optimistic = on_grid(mean + self.config.kappa * sd)
        chosen, on_front = next_batch(optimistic, candidates, observed, size, with_front=True)
        return chosen, on_front, optimistic, mean, sd

    def record(self, model, seen, candidates, chosen, on_front, mean, sd) -> None:
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


class ExactRanking(Ranking):
    """Every unmeasured θ ranked at each refit (|Θ| ≤ pool_above: the lattices of both papers)."""

    def initial_design(self, lattice: Lattice) -> np.ndarray:
        c = self.config
        low = np.flatnonzero(lattice.orders <= c.init_order)
        rest = np.setdiff1d(np.arange(lattice.size), low)
        extra = self.rng.choice(rest, size=min(c.init_random, len(rest)), replace=False) if len(rest) else rest
        design = np.concatenate([low, np.sort(extra)]).astype(np.int64)
        if len(design) == 0:  # init_order=-1, init_random=0: start from one random configuration
            design = self.rng.choice(lattice.size, size=1)
        return design

    def begin(self, lattice: Lattice, budget: int) -> Surrogate:
        """Values on the grid and what was measured, per θ of Θ; the surrogate."""
        self.values = np.full((lattice.size, 2), np.nan)
        self.evaluated = np.zeros(lattice.size, bool)
        self.size = self.config.batch
        return Surrogate(lattice, self.config.surrogate, seed=self.seed, **self.config.forest)

    def observe(self, indices, values) -> None:
        self.values[indices] = on_grid(values)
        self.evaluated[indices] = True

    def left(self, lattice: Lattice) -> bool:
        return not self.evaluated.all()

    def step(self, model, lattice: Lattice, left: int) -> np.ndarray:
        seen = np.flatnonzero(self.evaluated)
        model.fit(seen, self.values[seen], calibrate=False)  # TomoNav ranks the mean: no conformal scores needed
        candidates = np.flatnonzero(~self.evaluated)
        observed = self.values[seen[seen != 0]]  # θ = 0 is the clean reference, not on P*
        chosen, on_front, _, mean, sd = self.rank(model, candidates, observed, min(self.size, left))
        self.record(model, seen, candidates, chosen, on_front, mean, sd)
        # the predicted front holds nothing unmeasured: the model thinks P* is found, so the
        # rest is mop-up; double the batch (fewer refits) until the front has candidates again
        self.size = self.config.batch if on_front or not self.config.grow else 2 * self.size
        return chosen

    def repeats(self, lattice: Lattice, k: int) -> np.ndarray:
        """Θ exhausted: `k` re-proposals in seeded random order."""
        reps = -(-k // lattice.size)
        return np.concatenate([self.rng.permutation(lattice.size) for _ in range(reps)])[:k]


class PooledRanking(Ranking):
    """A candidate pool ranked at each refit (|Θ| > pool_above; module docstring)."""

    def initial_design(self, lattice: Lattice) -> np.ndarray:
        c = self.config
        low = _low_orders(lattice, c.init_order)
        extra = random_configurations(lattice, c.init_random + lattice.n * (lattice.levels - 1), self.rng, exclude=low)
        return np.concatenate([low, extra]).astype(np.int64)

    def begin(self, lattice: Lattice, budget: int) -> Surrogate:
        """What was measured, in order, with its values; the surrogate on capped bootstraps."""
        c = self.config
        # values as measured: the pool's fronts are read off them, because the grid (testnav/core/exact.py)
        # merges front members closer than 2⁻²⁴ (a δ saturating at 1 on a large lattice) and a
        # merged member's neighbours would never be pooled; comparisons alone need no grid (the same
        # values give the same fronts on every machine). The fit (Surrogate.fit puts its targets on
        # the grid) and the ranking use the grid.
        self.seen, self.values = np.zeros(0, np.int64), np.zeros((0, 2))
        self.carry = np.zeros(0, np.int64)
        self.grown = 1
        samples = None if budget <= c.max_samples else c.max_samples
        # κ = 0 ranks the mean, which 25 trees on 500-point bootstraps estimate about as well as 50 on all
        args = {**c.forest, "n_estimators": min(c.n_estimators, c.pool_trees)}
        return Surrogate(lattice, c.surrogate, seed=self.seed, max_samples=samples, **args)

    def observe(self, indices, values) -> None:
        self.seen = np.concatenate([self.seen, indices])
        self.values = np.concatenate([self.values, values])

    def left(self, lattice: Lattice) -> bool:
        return len(self.seen) < lattice.size

    def step(self, model, lattice: Lattice, left: int) -> np.ndarray | None:
        c, seen, values = self.config, self.seen, self.values
        model.fit(seen, values, calibrate=False)  # the conformal scores serve the certificate only
        keep = seen != 0  # θ = 0 is the clean reference, not on P*
        # while the predicted front holds nothing unmeasured, the pool is drawn around the
        # first `mop_fronts` measured fronts: the band near P*, not uniform fill
        fronts = 1 if self.grown == 1 else c.mop_fronts
        candidates = candidate_pool(lattice, seen, values, self.carry, c.pool, self.rng, fronts)
        if len(candidates) == 0:
            return None
        size = self.grown * max(c.batch, int(c.batch_growth * len(seen)))
        observed = on_grid(values[keep])
        chosen, on_front, optimistic, mean, sd = self.rank(model, candidates, observed, min(size, left))
        front = next_batch(optimistic, candidates, observed, on_front)
        self.carry = np.setdiff1d(front, chosen)  # predicted front, not yet measured: rank it again
        self.record(model, seen, candidates, chosen, on_front, mean, sd)
        self.grown = 1 if on_front or not c.grow else 2 * self.grown
        return chosen

    def repeats(self, lattice: Lattice, k: int) -> np.ndarray:
        """Θ exhausted (or nothing left to rank): `k` re-proposals of measured configurations."""
        return self.rng.choice(np.unique(self.seen), size=k)


class TomoNavSearch(Search):
    """TomoNav with the settings of `TomoNavConfig`, ranking exactly or from a pool by |Θ|."""

    def __init__(self, name: str, label: str | None = None, style: dict | None = None, **settings):
        super().__init__(name, label, style)
        valid = [f.name for f in fields(TomoNavConfig)]
        unknown = [k for k in settings if k not in valid]
        if unknown:
            raise UserError(f"search {name} has no setting '{unknown[0]}' (valid: {', '.join(valid)})")
        self.config = TomoNavConfig(**settings)
        self.history: list[dict] = []  # the last run's refits (Ranking.history)

    def strategy(self, lattice: Lattice, seed: int) -> Ranking:
        """ExactRanking up to pool_above configurations, PooledRanking beyond."""
        kind = PooledRanking if lattice.size > self.config.pool_above else ExactRanking
        return kind(self.config, self.objectives, seed)

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        ranking = self.strategy(oracle.lattice, seed)
        self.history = ranking.history
        return ranking.run(oracle, budget)


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
