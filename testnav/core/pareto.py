"""Pareto dominance for two maximised objectives (δ, ρ).

θ dominates θ' when it is at least as good on both objectives and strictly better on one,
so configurations with identical (δ, ρ) never dominate each other and all stay on the front.
Non-dominated rank and crowding distance (NSGA-II's survival order, also the order of the
ranked list R and of TomoNav's batches) live here, beside dominance, for every caller.
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


def leading_fronts(delta, rho, k: int) -> np.ndarray:
    """Positions of the members of the first `k` non-dominated fronts, peeled one at a time:
    front by front, each in ascending position (O(k · n log n), unlike `nondominated_rank`)."""
    alive = np.ones(len(delta), bool)
    d, r = np.asarray(delta, float), np.asarray(rho, float)
    out = []
    for _ in range(k):
        live = np.flatnonzero(alive)
        if not len(live):
            break
        front = live[nondominated_mask(d[live], r[live])]
        out.append(front)
        alive[front] = False
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def pareto_front(delta, rho) -> np.ndarray:
    """Indices of P*, ascending."""
    return np.flatnonzero(nondominated_mask(delta, rho))


def dominates_bruteforce(delta, rho) -> np.ndarray:
    """O(n²) reference used by the tests: mask of non-dominated points."""
    d = np.asarray(delta, float)[:, None]
    r = np.asarray(rho, float)[:, None]
    dom = (d.T >= d) & (r.T >= r) & ((d.T > d) | (r.T > r))  # dom[i, j]: j dominates i
    return np.asarray(~dom.any(axis=1))


def nondominated_rank(f: np.ndarray) -> np.ndarray:
    """Front index (0 = non-dominated) of each of M points per run; f is (R, M, 2), maximised.

    In order of decreasing f1 (then f2), a point's front is one more than the deepest front
    among the earlier points that dominate it: a 2-objective sweep, vectorised over runs.
    """
    r, m, _ = f.shape
    order = np.lexsort((-f[..., 1], -f[..., 0]), axis=-1)
    f1 = np.take_along_axis(f[..., 0], order, 1)
    f2 = np.take_along_axis(f[..., 1], order, 1)
    rank = np.zeros((r, m), dtype=np.int64)
    for j in range(1, m):
        dom = (f2[:, :j] >= f2[:, j, None]) & ((f1[:, :j] > f1[:, j, None]) | (f2[:, :j] > f2[:, j, None]))
        deepest = np.where(dom, rank[:, :j], -1).max(axis=1)
        rank[:, j] = deepest + 1  # -1 + 1 = 0 when nothing dominates it
    out = np.empty_like(rank)
    np.put_along_axis(out, order, rank, 1)
    return out


def crowding_distance(f: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """pymoo's crowding distance within each front, (R, M); boundaries and small fronts = inf."""
    r, m, k = f.shape
    cd = np.zeros((r, m))
    idx = np.arange(m)
    with np.errstate(invalid="ignore", divide="ignore"):
        for obj in range(k):
            order = np.lexsort((f[..., obj], rank), axis=-1)
            rs = np.take_along_axis(rank, order, 1)
            fs = np.take_along_axis(f[..., obj], order, 1)
            start = np.r_[True, np.zeros(m - 1, bool)][None, :] | np.c_[np.ones((r, 1), bool), rs[:, 1:] != rs[:, :-1]]
            end = np.c_[rs[:, 1:] != rs[:, :-1], np.ones((r, 1), bool)]
            first = np.maximum.accumulate(np.where(start, idx, 0), axis=1)
            last = np.minimum.accumulate(np.where(end, idx, m)[:, ::-1], axis=1)[:, ::-1]
            norm = np.take_along_axis(fs, last, 1) - np.take_along_axis(fs, first, 1)
            gap_prev = np.where(start, np.inf, fs - np.c_[fs[:, :1], fs[:, :-1]])
            gap_next = np.where(end, np.inf, np.c_[fs[:, 1:], fs[:, -1:]] - fs)
            contrib = (gap_prev + gap_next) / norm
            contrib[~np.isfinite(norm) | (norm == 0)] = 0.0
            contrib[np.isnan(contrib)] = 0.0
            small = (last - first + 1) <= 2
            contrib[small] = np.inf
            np.put_along_axis(cd, order, np.take_along_axis(cd, order, 1) + contrib, 1)
    return cd / k
