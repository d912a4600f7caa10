"""ε-dominance for two maximised objectives (δ, ρ): the test behind the certificate's p_good.

A point x is ε-dominated by a front F when some f ∈ F is, after adding ε to each of its
objectives, at least as good as x on both: f_δ + ε_δ ≥ x_δ and f_ρ + ε_ρ ≥ x_ρ. A measured
front is ε-complete when every configuration is ε-dominated by it: nothing unmeasured improves
it by more than ε in either objective (the additive ε-indicator of Zitzler et al. 2003 is ≤ ε).
At ε = 0 this is weak dominance, so an exactly complete front is ε-complete for every ε ≥ 0.
"""

from __future__ import annotations

import numpy as np


def eps_dominated(points: np.ndarray, front: np.ndarray, eps) -> np.ndarray:
    """Bool per point of `points` (..., 2): ε-dominated by some point of `front` (f, 2);
    `eps` a scalar or (ε_δ, ε_ρ). O((n + f) log f)."""
    points = np.asarray(points, dtype=float)
    if len(front) == 0:
        return np.zeros(points.shape[:-1], bool)
    e = np.broadcast_to(np.asarray(eps, dtype=float), (2,))
    order = np.argsort(front[:, 0])
    fd, fr = front[order, 0] + e[0], front[order, 1] + e[1]
    best = np.r_[np.maximum.accumulate(fr[::-1])[::-1], -np.inf]  # best shifted ρ among shifted δ ≥ fd[i]
    return best[np.searchsorted(fd, points[..., 0], side="left")] >= points[..., 1]


def eps_complete(front: np.ndarray, rest: np.ndarray, eps) -> bool:
    """Whether `front` ε-dominates every point of `rest` (the configurations not measured)."""
    return bool(eps_dominated(rest, front, eps).all()) if len(rest) else True


def scale(values: np.ndarray) -> np.ndarray:
    """(range δ, range ρ) over `values` (n, 2), 1 where a range is 0: the units in which ε is read.
    On a ground-truth table, normalised over Θ, the measured range is at most 1, so ε in these
    units is at most ε in the table's; live, where values are raw, it is the same reading."""
    if len(values) == 0:
        return np.ones(2)
    span = np.ptp(values, axis=0)
    return np.where(span > 0, span, 1.0)
