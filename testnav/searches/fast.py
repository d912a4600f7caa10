"""A vectorised NSGA-II / scalar-GA replay engine that steps many runs in lock-step.

pymoo stays the reference implementation (`engine: pymoo`); this engine reproduces its
operators and selection rules in numpy so that the paper's 5,120-run hyperparameter grid
runs in minutes instead of hours:

* initial population: μ distinct configurations per run;
* binary tournament on random permutations (pressure 2): NSGA-II prefers the dominating
  individual, then the larger crowding distance, then a coin flip (pymoo's
  `comp_by_dom_and_crowding`); the GA prefers the fitter, then a coin flip;
* SBX (per-mating probability, per-variable probability, bounded β, child exchange) and
  polynomial mutation exactly as pymoo 0.6.2's formulas, each followed by rounding repair;
* duplicate elimination against the current population, the offspring accepted so far
  and earlier members of the same batch, regenerating up to 100 rounds (pymoo's infill);
* survival: non-dominated rank, then crowding distance within the front (pymoo's "cd":
  fronts of ≤ 2 members are infinitely crowded-apart), ties at random; the GA keeps the fittest.

Each run draws from its own `numpy.random.Generator(seed)`, so a run's trace depends on
its seed and settings only, never on which other runs share the batch. Random streams
differ from pymoo's, so traces are not bit-identical to `engine: pymoo`; the test suite
checks that AUC distributions agree within seed noise.
"""

from __future__ import annotations

import numpy as np

from ..core.lattice import Lattice
from ..core.pareto import crowding_distance, nondominated_rank
from .streams import Streams

MAX_INFILL_ROUNDS = 100  # pymoo's InfillCriterion.n_max_iterations


class FastEvolution:
    """R runs of NSGA-II (`mode="nsga2"`, 1 or 2 objectives) or the scalar GA (`mode="ga"`)."""

    def __init__(
        self,
        lattice: Lattice,
        pop_size: int,
        mode: str = "nsga2",
        p_crossover=0.9,
        p_crossover_var=0.5,
        p_mutation=0.9,
        p_mutation_var=None,
        eliminate_duplicates=True,
    ):
        self.lattice, self.mu, self.mode = lattice, int(pop_size), mode
        self.p_c, self.p_cv, self.p_m = float(p_crossover), float(p_crossover_var), float(p_mutation)
        self.p_mv = float(p_mutation_var) if p_mutation_var is not None else min(0.5, 1.0 / lattice.n)
        self.eliminate = bool(eliminate_duplicates)
        self.upper = float(lattice.levels - 1)

    # --- variation -------------------------------------------------------------------------
    def sbx(self, p1, p2, eta, k, rs: Streams):
        """Two children per mating, (R, K, n) each; eta is (R,), k (R,) the matings each run uses."""
        eta = eta[:, None, None]
        n = p1.shape[-1]
        mate = rs.draw(k)[..., None] < self.p_c
        cross = (rs.draw(k, n) < self.p_cv) & (np.abs(p1 - p2) > 1e-14) & mate
        y1, y2 = np.minimum(p1, p2), np.maximum(p1, p2)
        delta = np.where(cross, y2 - y1, 1.0)
        u = rs.draw(k, n)

        def betaq(beta):
            alpha = 2.0 - np.power(beta, -(eta + 1.0))
            return np.where(
                u <= 1.0 / alpha,
                np.power(u * alpha, 1.0 / (eta + 1.0)),
                np.power(1.0 / (2.0 - u * alpha), 1.0 / (eta + 1.0)),
            )

        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            c1 = 0.5 * ((y1 + y2) - betaq(1.0 + 2.0 * y1 / delta) * delta)
            c2 = 0.5 * ((y1 + y2) + betaq(1.0 + 2.0 * (self.upper - y2) / delta) * delta)
        sm = p1 < p2
        k1, k2 = np.where(sm, c1, c2), np.where(sm, c2, c1)
        swap = (rs.draw(k, n) < 0.5) ^ (p1 > p2)
        k1, k2 = np.where(swap, k2, k1), np.where(swap, k1, k2)
        o1 = np.where(cross, k1, p1).clip(0.0, self.upper)
        o2 = np.where(cross, k2, p2).clip(0.0, self.upper)
        return np.round(o1), np.round(o2)

    def mutate(self, x, eta, k, rs: Streams):
        """x is (R, K, n) with the first k[r] rows of run r in use."""
        eta = eta[:, None, None]
        n = x.shape[-1]
        mut = (rs.draw(k) <= self.p_m)[..., None] & (rs.draw(k, n) < self.p_mv)
        u = rs.draw(k, n)
        span = self.upper
        d1, d2 = x / span, (span - x) / span
        power = 1.0 / (eta + 1.0)
        with np.errstate(invalid="ignore"):
            low = np.power(2.0 * u + (1.0 - 2.0 * u) * np.power(1.0 - d1, eta + 1.0), power) - 1.0
            high = 1.0 - np.power(2.0 * (1.0 - u) + 2.0 * (u - 0.5) * np.power(1.0 - d2, eta + 1.0), power)
        y = (x + np.where(u <= 0.5, low, high) * span).clip(0.0, span)
        return np.round(np.where(mut, y, x))

    # --- selection -------------------------------------------------------------------------
    def tournament(self, f, rank, cd, k, rs: Streams):
        """Parent indices (R, max k, 2) into the population; run r uses its first k[r] matings."""
        r, mu = rank.shape
        n_random = k * 2 * 2
        n_perms = -(-n_random // mu)
        perms = np.argsort(rs.draw(n_perms, mu), axis=-1).reshape(r, -1)[:, : int(n_random.max())].reshape(r, -1, 2)
        a, b = perms[..., 0], perms[..., 1]
        fa, fb = np.take_along_axis(f, a[..., None], 1), np.take_along_axis(f, b[..., None], 1)
        coin = rs.draw(2 * k)[:, : a.shape[1]] < 0.5
        if self.mode == "ga":
            better_a = fa[..., 0] > fb[..., 0]
            better_b = fb[..., 0] > fa[..., 0]
        else:
            a_dom = (fa >= fb).all(-1) & (fa > fb).any(-1)
            b_dom = (fb >= fa).all(-1) & (fb > fa).any(-1)
            ca, cb = np.take_along_axis(cd, a, 1), np.take_along_axis(cd, b, 1)
            better_a = a_dom | (~b_dom & (ca > cb))
            better_b = b_dom | (~a_dom & (cb > ca))
        win = np.where(better_a, a, np.where(better_b, b, np.where(coin, a, b)))
        return win.reshape(r, -1, 2)

    def survive(self, f, valid, rs: Streams):
        """Indices (R, μ) of survivors in the merged population (valid members first in each
        row), with their rank and crowding."""
        r, m, _ = f.shape
        f = np.where(valid[..., None], f, -np.inf)
        noise = rs.draw(valid.sum(axis=1))
        noise = np.c_[noise, np.full((r, m - noise.shape[1]), 0.5)]
        if self.mode == "ga":
            order = np.lexsort((np.arange(m)[None, :].repeat(r, 0), -f[..., 0]), axis=-1)  # stable, fittest first
            keep = order[:, : self.mu]
            return keep, np.zeros_like(keep), np.zeros(keep.shape)
        rank = nondominated_rank(f)
        cd = crowding_distance(f, rank)
        cd[~valid] = -np.inf
        order = np.lexsort((noise, -cd, rank), axis=-1)
        keep = order[:, : self.mu]
        return keep, np.take_along_axis(rank, keep, 1), np.take_along_axis(cd, keep, 1)

    # --- the loop --------------------------------------------------------------------------
    def run_many(self, values: np.ndarray, budget: int, seeds, eta_c, eta_m) -> list[np.ndarray]:
        """values: (R, |Θ|, k) objectives to maximise per run (k = 1 or 2). Returns each run's proposals."""
        values = np.asarray(values, dtype=float)
        r, size, k = values.shape
        if k == 1 and self.mode == "nsga2":
            values = np.concatenate([values, np.zeros_like(values)], axis=-1)  # one objective: f2 ties everywhere
        eta_c = np.broadcast_to(np.asarray(eta_c, float), (r,)).copy()
        eta_m = np.broadcast_to(np.asarray(eta_m, float), (r,)).copy()
        rs = Streams(seeds)
        rows = np.arange(r)[:, None]
        tuples = self.lattice.tuples.astype(float)
        weights = self.lattice.levels ** np.arange(self.lattice.n - 1, -1, -1)

        pop = rs.choice(size, self.mu)  # (R, μ) lattice indices, distinct per run
        proposals = [[p] for p in pop]
        spent = np.full(r, self.mu)
        f = values[rows, pop]
        keep, rank, cd = self.survive(f, np.ones(pop.shape, bool), rs)
        pop, f = np.take_along_axis(pop, keep, 1), np.take_along_axis(f, keep[..., None], 1)

        while (spent < budget).any():
            want = np.minimum(self.mu, budget - spent)  # m per run
            m_max = int(want.max())
            off = np.full((r, m_max), -1, dtype=np.int64)
            count = np.zeros(r, dtype=np.int64)
            seen = np.zeros((r, size), dtype=bool)
            if self.eliminate:
                seen[rows, pop] = True
            for _ in range(MAX_INFILL_ROUNDS):
                need = np.maximum(want - count, 0)
                if (need == 0).all():
                    break
                k = -(-need // 2)  # matings per run, two children each (pymoo's Mating)
                parents = self.tournament(f, rank, cd, k, rs)
                km = parents.shape[1]
                x = tuples[np.take_along_axis(pop, parents.reshape(r, -1), 1)].reshape(r, km, 2, -1)
                c1, c2 = self.sbx(x[:, :, 0], x[:, :, 1], eta_c, k, rs)
                # each run's children in pymoo's order: all first children, then all second children
                slot_of = np.c_[np.where(np.arange(km) < k[:, None], 0, 2), np.where(np.arange(km) < k[:, None], 1, 2)]
                order = np.argsort(slot_of, axis=1, kind="stable")
                kids = np.take_along_axis(np.concatenate([c1, c2], axis=1), order[..., None], 1)
                kids = self.mutate(kids, eta_m, 2 * k, rs)
                codes = (kids @ weights).astype(np.int64)  # (R, K)
                ok = np.arange(codes.shape[1])[None, :] < (2 * k)[:, None]
                if self.eliminate:
                    ok &= ~seen[rows, codes]
                    first = np.zeros(codes.shape, bool)
                    srt = np.argsort(codes, axis=1, kind="stable")
                    sc = np.take_along_axis(codes, srt, 1)
                    np.put_along_axis(first, srt, np.c_[np.ones((r, 1), bool), sc[:, 1:] != sc[:, :-1]], 1)
                    ok &= first
                slot = count[:, None] + np.cumsum(ok, axis=1) - 1
                ok &= slot < want[:, None]
                rr, cc = np.nonzero(ok)
                off[rr, slot[rr, cc]] = codes[rr, cc]
                if self.eliminate:
                    seen[rr, codes[rr, cc]] = True
                count += ok.sum(axis=1)
                if not self.eliminate:
                    break
            stalled = (count == 0) & (want > 0)
            for i in np.flatnonzero(count):
                proposals[i].append(off[i, : count[i]])
            spent += count
            spent[stalled] = budget  # cannot produce anything new: give up, as pymoo's loop would spin
            valid = np.c_[np.ones(pop.shape, bool), off >= 0]
            merged = np.c_[pop, np.where(off >= 0, off, 0)]
            fm = values[rows, merged]
            keep, rank, cd = self.survive(fm, valid, rs)
            pop, f = np.take_along_axis(merged, keep, 1), np.take_along_axis(fm, keep[..., None], 1)
        return [np.concatenate(p)[:budget] for p in proposals]
