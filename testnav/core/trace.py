"""From a search's proposals to its outputs (DESIGN.md contracts): the per-proposal trace,
the ranked list R of Algorithm 1, the recall curves on both of the paper's x-axes, and
the run summary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .lattice import Lattice
from .pareto import crowding_distance, nondominated_rank
from .recall import auc_recall, budget_to_full_recall, first_sightings, recall_curve, unique_to_full_recall


def make_trace(
    proposals: np.ndarray,
    lattice: Lattice,
    values: np.ndarray,
    pstar: np.ndarray | None,
    costs: np.ndarray | None = None,
) -> pd.DataFrame:
    """One row per proposal; `values` is (len(proposals), 2) δ and ρ of each proposal. With
    `costs` (per-configuration inferences, by lattice index) an `inferences` column adds the
    cumulative inferences spent (testnav/groundtruth/inferences.py)."""
    p = np.asarray(proposals, dtype=np.int64)
    new = first_sightings(p)
    theta = lattice.theta(p)
    trace = pd.DataFrame({"proposal": np.arange(1, len(p) + 1)})
    for i in range(lattice.n):
        trace[f"t{i + 1}"] = theta[:, i]
    trace["new"] = new
    trace["unique"] = np.cumsum(new)
    trace["delta"] = values[:, 0]
    trace["rho"] = values[:, 1]
    if pstar is not None:
        in_pstar = np.zeros(lattice.size, dtype=bool)
        in_pstar[pstar] = True
        trace["in_pstar"] = in_pstar[p]
    else:  # live search: no ground truth to compare with
        trace["in_pstar"] = pd.array([pd.NA] * len(p), dtype="boolean")
    if costs is not None:
        trace["inferences"] = cumulative(p, new, costs)
    return trace


def cumulative(proposals, new, costs: np.ndarray) -> np.ndarray:
    """Inferences spent after each proposal: a configuration is paid for the first time it is proposed."""
    return np.cumsum(np.where(new, costs[np.asarray(proposals, dtype=np.int64)], 0))


def ranked_list(trace: pd.DataFrame, n: int) -> pd.DataFrame:
    """R: every evaluated configuration by Pareto rank (0 = first front), then crowding distance."""
    firsts = trace[trace["new"].astype(bool)]
    f = firsts[["delta", "rho"]].to_numpy(float)[None]
    rank = nondominated_rank(f)[0]
    cd = crowding_distance(f, rank[None])[0]
    out = firsts[[f"t{i + 1}" for i in range(n)] + ["delta", "rho", "in_pstar"]].copy()
    out.insert(n, "proposal", firsts["proposal"].to_numpy())
    out["rank"] = rank
    out["crowding"] = cd
    order = np.lexsort((firsts["proposal"].to_numpy(), -cd, rank))
    return out.iloc[order].reset_index(drop=True)


def unique_curve(trace: pd.DataFrame, lattice: Lattice, pstar: np.ndarray) -> np.ndarray:
    """Recall@P*(u), u = 1..|Θ| (the paper's top-row x-axis)."""
    firsts = lattice.index(
        trace.loc[trace["new"].astype(bool), [f"t{i + 1}" for i in range(lattice.n)]].to_numpy(np.int64)
    )
    return recall_curve(np.atleast_1d(firsts), pstar, lattice.size)


def budget_curve(trace: pd.DataFrame, pstar_size: int) -> np.ndarray:
    """Recall@P* after each proposal b = 1..B (the paper's bottom-row x-axis: consumed budget)."""
    hits = (trace["new"].astype(bool) & trace["in_pstar"].fillna(False).astype(bool)).to_numpy()
    return np.cumsum(hits) / max(pstar_size, 1)


def found_curve(trace: pd.DataFrame, pstar_size: int) -> np.ndarray:
    """Recall@P* after each new configuration, read from the trace alone (its `in_pstar` column):
    `unique_curve` for a finished run whose lattice and P* are no longer at hand."""
    new = trace["new"].astype(bool).to_numpy()
    return np.cumsum(trace["in_pstar"].fillna(False).astype(bool).to_numpy()[new]) / max(pstar_size, 1)


def summarize(trace: pd.DataFrame, lattice: Lattice, pstar: np.ndarray | None, proposals, **identity) -> dict:
    base = {
        **identity,
        "proposals": int(len(trace)),
        "unique": int(trace["unique"].iloc[-1]) if len(trace) else 0,
        "space_size": lattice.size,
    }
    if pstar is None:
        return {
            **base,
            "pstar_size": None,
            "pstar_orders": None,
            "auc_recall": None,
            "final_recall": None,
            "unique_to_full_recall": None,
            "budget_to_full_recall": None,
        }
    curve = unique_curve(trace, lattice, pstar)
    return {
        **base,
        "pstar_size": int(len(pstar)),
        "pstar_orders": lattice.order_counts(pstar),
        "auc_recall": auc_recall(curve),
        "final_recall": float(curve[-1]),
        "unique_to_full_recall": unique_to_full_recall(curve),
        "budget_to_full_recall": budget_to_full_recall(proposals, pstar),
    }
