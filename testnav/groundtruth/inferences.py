"""The cost-aware view: Recall@P* against model inferences spent, not only configurations.

A practitioner pays for inferences. What one configuration costs is the number of inputs its
test runs before TestifAI's early-stopping rule (tomography.batch / window / delta, inputs in
the seeded order of tomography.seed) says its estimate has converged: read off a ground
truth's per-input outcomes (`correct`), identically for every search, so curves are
comparable. A repeat is a cache hit and costs nothing. Searches still act on the table's
full-D values; the costs say what the same proposals would have cost with early stopping.

Without per-input outcomes (a plain CSV/Parquet replay table) every configuration costs the
same, |D|, counted as 1: the inference axis is then the unique-configuration axis. Live runs
evaluate all of D per configuration (no early stopping), so there each costs |D| inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.lattice import Lattice
from ..core.table import level_columns

EARLY_STOPPING = "inputs (early stopping)"
PER_CONFIGURATION = "configurations (no per-input outcomes; each costs |D|)"
FULL_D = "inputs (full D, no early stopping)"


def table_costs(path, lattice: Lattice, rule, seed: int = 0) -> tuple[np.ndarray, str]:
    """(per-configuration cost indexed by lattice index, unit) for a ground-truth table file."""
    from ..core.early_stopping import input_order, stop_after

    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        names = pq.read_schema(p).names
        if "correct" in names:
            df = pd.read_parquet(p, columns=[c for c in names if c == "correct" or c.startswith("t")])
            df = df[level_columns(df) + ["correct"]]
            outcomes = np.stack(df["correct"].to_numpy()).astype(bool)
            rows = np.argsort(lattice.index(df[level_columns(df)].to_numpy(np.int64)))
            order = input_order(outcomes.shape[1], seed)
            costs = np.array([stop_after(outcomes[r, order], rule) for r in rows], dtype=np.int64)
            return costs, EARLY_STOPPING
    return np.ones(lattice.size, dtype=np.int64), PER_CONFIGURATION


def auc_recall_inferences(first_order, pstar, costs: np.ndarray) -> float:
    """Area under Recall@P* against inferences, over [0, Σ_Θ cost], divided by Σ_Θ cost.

    Trapezoids between the points (C_j, r_j) after each new configuration j, then the last
    recall held to the end (as recall_curve pads). With unit costs this is exactly auc_recall."""
    u = np.asarray(first_order, dtype=np.int64)
    total = float(costs.sum())
    if len(u) == 0 or total <= 0:
        return 0.0
    in_p = np.zeros(len(costs), bool)
    in_p[np.asarray(pstar, dtype=np.int64)] = True
    r = np.cumsum(in_p[u]) / max(int(in_p.sum()), 1)
    c = np.cumsum(costs[u]).astype(float)
    area = float(((r[:-1] + r[1:]) / 2 * np.diff(c)).sum()) + r[-1] * (total - c[-1])
    return area / total


def inference_summary(trace: pd.DataFrame, lattice: Lattice, pstar, costs: np.ndarray, unit: str) -> dict:
    out = {
        "inference_unit": unit,
        "inferences": int(trace["inferences"].iloc[-1]) if len(trace) else 0,
        "inferences_space": int(costs.sum()),
    }
    if pstar is None:
        return out
    tcols = [f"t{i + 1}" for i in range(lattice.n)]
    firsts = trace[trace["new"].astype(bool)]
    u = lattice.index(firsts[tcols].to_numpy(np.int64)) if len(firsts) else np.zeros(0, np.int64)
    hit = firsts["in_pstar"].astype(bool).to_numpy()
    full = int(hit.sum()) == len(pstar) and len(pstar) > 0
    out["auc_recall_inferences"] = auc_recall_inferences(np.atleast_1d(u), pstar, costs)
    out["inferences_to_full_recall"] = int(firsts["inferences"].to_numpy()[np.flatnonzero(hit)[-1]]) if full else None
    return out
