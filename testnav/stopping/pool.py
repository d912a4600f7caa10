"""Candidate pools on a lattice too large to rank whole (TomoNav's large-lattice path, and the
stopping certificate's sampled estimate).

On a large Θ the front P* is a thin set near the measured front: a θ on it differs from some
measured non-dominated θ in a level or two. So the surrogate only needs to rank the unit-step
neighbours of the measured front, a few random mutations of each member (a level or two moved
anywhere, the jumps a unit step misses), what it predicted last time and has not measured yet,
and some uniform random configurations (so a region with no measured point can still win).
Everything is drawn from the caller's generator, and returned sorted and unmeasured: the same
seed gives the same pool on every machine, and no array is as large as Θ.
"""

from __future__ import annotations

import numpy as np

from ..core.lattice import Lattice
from ..core.pareto import leading_fronts

MUTATIONS = 4  # random mutations per front member


def random_configurations(lattice: Lattice, k: int, rng: np.random.Generator, exclude=()) -> np.ndarray:
    """`k` distinct configurations drawn uniformly from Θ minus `exclude` (sorted), without Θ."""
    exclude = np.unique(np.asarray(exclude, dtype=np.int64))
    k = int(min(k, lattice.size - len(exclude)))
    got = np.zeros(0, np.int64)
    while len(got) < k:
        draw = rng.integers(0, lattice.size, size=2 * (k - len(got)) + 8)
        draw = draw[~np.isin(draw, exclude) & ~np.isin(draw, got)]
        _, first = np.unique(draw, return_index=True)
        got = np.concatenate([got, draw[np.sort(first)][: k - len(got)]])
    return np.sort(got)


def neighbours(lattice: Lattice, indices: np.ndarray) -> np.ndarray:
    """Sorted unique configurations one level up or down in one family from any of `indices`."""
    x = lattice.theta(np.asarray(indices, dtype=np.int64))
    steps = np.concatenate([np.eye(lattice.n, dtype=np.int64), -np.eye(lattice.n, dtype=np.int64)])
    nbrs = (x[:, None, :] + steps[None]).reshape(-1, lattice.n)
    nbrs = nbrs[((nbrs >= 0) & (nbrs < lattice.levels)).all(axis=1)]
    return np.unique(lattice.index(nbrs)) if len(nbrs) else np.zeros(0, np.int64)


def candidate_pool(
    lattice: Lattice,
    measured: np.ndarray,
    values: np.ndarray,
    carry: np.ndarray,
    size: int,
    rng: np.random.Generator,
    fronts: int = 1,
) -> np.ndarray:
    """Sorted unmeasured configurations to rank, θ = 0 (the clean reference) never among them:
    neighbours and mutations of the members of the first `fronts` measured fronts (of `measured`
    indices with their (δ, ρ) `values`; θ = 0 is not on them), `carry`, and uniform fill up to
    `size`."""
    measured = np.asarray(measured, dtype=np.int64)
    test = measured != 0
    front = measured[test][leading_fronts(values[test, 0], values[test, 1], fronts)]
    measured = np.union1d(measured, [0])
    mut = np.repeat(lattice.theta(front), MUTATIONS, axis=0)
    flip = rng.random(mut.shape) < 1.5 / lattice.n
    flip[np.arange(len(mut)), rng.integers(0, lattice.n, len(mut))] = True  # at least one level moves
    mut = np.where(flip, rng.integers(0, lattice.levels, mut.shape), mut)
    near = np.concatenate([neighbours(lattice, front), lattice.index(mut), np.asarray(carry, dtype=np.int64)])
    near = np.setdiff1d(near, measured)  # sorted, unique
    if len(near) > size:  # keep the carried-over predictions, thin the rest evenly at random
        keep = np.isin(near, carry)
        rest = np.flatnonzero(~keep)
        pick = rng.choice(rest, size=max(size - int(keep.sum()), 0), replace=False)
        near = near[np.sort(np.concatenate([np.flatnonzero(keep), pick]))]
    fill = max(size - len(near), size // 4)
    rand = random_configurations(lattice, fill, rng, exclude=np.concatenate([measured, near]))
    return np.union1d(near, rand)
