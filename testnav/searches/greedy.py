"""Greedy local search on s(θ) = min(δ, ρ) with random restarts (§4.2)."""

from __future__ import annotations

import numpy as np

from . import Search
from .ga import scalar_score


class GreedySearch(Search):
    """Steepest ascent: from a random configuration, propose every neighbour (±1 in one
    dimension, in dimension order, −1 before +1), move to the best if it is strictly better
    than the current one, otherwise restart at a uniformly random configuration. Every
    proposal, restarts included, consumes one unit of budget."""

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        lattice = oracle.lattice
        steps = np.concatenate([-np.eye(lattice.n, dtype=np.int64), np.eye(lattice.n, dtype=np.int64)], axis=1)
        steps = steps.reshape(lattice.n * 2, lattice.n)  # row 2i: −1 on dim i, row 2i+1: +1 on dim i
        out = np.empty(budget, dtype=np.int64)
        b = 0
        current = None
        while b < budget and not oracle.stopped:
            if current is None:
                current = int(rng.integers(lattice.size))
                out[b] = current
                b += 1
                score = float(scalar_score(oracle.evaluate([current], self.objectives))[0, 0])
                continue
            nbrs = lattice.theta(current)[None, :] + steps
            nbrs = nbrs[((nbrs >= 0) & (nbrs < lattice.levels)).all(axis=1)]
            idx = lattice.index(nbrs)[: budget - b]
            out[b : b + len(idx)] = idx
            b += len(idx)
            s = scalar_score(oracle.evaluate(idx, self.objectives))[:, 0]
            best = int(np.argmax(s))
            if s[best] > score:
                current, score = int(idx[best]), float(s[best])
            else:
                current = None  # local optimum: restart
        return out[:b]
