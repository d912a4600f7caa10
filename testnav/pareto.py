"""Pareto dominance for two maximised objectives (δ, ρ).

θ dominates θ' when it is at least as good on both objectives and strictly better on one,
so configurations with identical (δ, ρ) never dominate each other and all stay on the front.
"""

from __future__ import annotations

import numpy as np


def nondominated_mask(delta, rho) -> np.ndarray:
    """Boolean mask of the non-dominated points, in O(n log n).

    Sweep by δ descending: a point survives iff no point with strictly larger δ has ρ ≥ its ρ,
    and no point with equal δ has strictly larger ρ.
    """
    d = np.asarray(delta, dtype=float)
    r = np.asarray(rho, dtype=float)
    order = np.lexsort((-r, -d))  # δ desc, then ρ desc
    ds, rs = d[order], r[order]
    # best ρ among all points with strictly larger δ: prefix max over previous δ groups
    group_start = np.r_[True, ds[1:] != ds[:-1]]
    gid = np.cumsum(group_start) - 1
    group_max = np.maximum.reduceat(rs, np.flatnonzero(group_start))
    prev_best = np.r_[-np.inf, np.maximum.accumulate(group_max)[:-1]]
    keep_sorted = (rs == group_max[gid]) & (rs > prev_best[gid])
    mask = np.zeros(len(d), dtype=bool)
    mask[order] = keep_sorted
    return mask


def pareto_front(delta, rho) -> np.ndarray:
    """Indices of P*, ascending."""
    return np.flatnonzero(nondominated_mask(delta, rho))


def dominates_bruteforce(delta, rho) -> np.ndarray:
    """O(n²) reference used by the tests: mask of non-dominated points."""
    d = np.asarray(delta, float)[:, None]
    r = np.asarray(rho, float)[:, None]
    dom = (d.T >= d) & (r.T >= r) & ((d.T > d) | (r.T > r))  # dom[i, j]: j dominates i
    return ~dom.any(axis=1)
