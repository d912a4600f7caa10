"""From a search's proposals to the per-proposal trace and the run summary (DESIGN.md contracts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .recall import auc_recall, budget_to_full_recall, first_sightings, recall_curve, unique_to_full_recall
from .table import Objectives


def make_trace(proposals: np.ndarray, obj: Objectives) -> pd.DataFrame:
    p = np.asarray(proposals, dtype=np.int64)
    new = first_sightings(p)
    in_pstar = np.zeros(obj.lattice.size, dtype=bool)
    in_pstar[obj.pstar] = True
    theta = obj.lattice.theta(p)
    trace = pd.DataFrame({"proposal": np.arange(1, len(p) + 1)})
    for i in range(obj.lattice.n):
        trace[f"t{i + 1}"] = theta[:, i]
    trace["new"] = new
    trace["unique"] = np.cumsum(new)
    trace["delta"] = obj.delta[p]
    trace["rho"] = obj.rho[p]
    trace["in_pstar"] = in_pstar[p]
    return trace


def curve_of(trace: pd.DataFrame, obj: Objectives) -> np.ndarray:
    """Recall@P*(u), u = 1..|Θ|, read off a trace."""
    tcols = [f"t{i + 1}" for i in range(obj.lattice.n)]
    firsts = obj.lattice.index(trace.loc[trace["new"].astype(bool), tcols].to_numpy(np.int64))
    return recall_curve(np.atleast_1d(firsts), obj.pstar, obj.lattice.size)


def summarize(trace: pd.DataFrame, obj: Objectives, proposals: np.ndarray, **identity) -> dict:
    curve = curve_of(trace, obj)
    pstar = obj.pstar
    return {
        **identity,
        "proposals": int(len(trace)),
        "unique": int(trace["unique"].iloc[-1]) if len(trace) else 0,
        "space_size": obj.lattice.size,
        "pstar_size": int(len(pstar)),
        "pstar_orders": obj.lattice.order_counts(pstar),
        "auc_recall": auc_recall(curve),
        "final_recall": float(curve[-1]),
        "unique_to_full_recall": unique_to_full_recall(curve),
        "budget_to_full_recall": budget_to_full_recall(proposals, pstar),
    }
