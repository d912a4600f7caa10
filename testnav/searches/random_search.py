"""Random search: objective-free baseline (§4.2)."""

from __future__ import annotations

import numpy as np

from . import Search


class RandomSearch(Search):
    """Propose Θ in a random permutation; once Θ is exhausted, start a fresh permutation.

    Every configuration is seen exactly once in the first |Θ| proposals, so its recall
    curve is the expected-hypergeometric baseline; later proposals are repeats.
    """

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        size = oracle.lattice.size
        reps = -(-budget // size)
        proposals = np.concatenate([rng.permutation(size) for _ in range(reps)])[:budget]
        oracle.evaluate(proposals, self.objectives)
        return proposals
