"""Recall@P* and AUC-Recall exactly as the TestNav paper defines them (§4.1).

Recall@P*(u) = |E_u ∩ P*| / |P*| over the first u unique configurations, and
AUC = (1/|Θ|) Σ_{i=1}^{|Θ|-1} (r_i + r_{i+1}) / 2 over u = 1..|Θ|.
A run that saw fewer than |Θ| unique configurations keeps its last recall for the
remaining u (the paper is silent; padding with the last value is the only reading that
neither rewards nor punishes a run for stopping early beyond what it found).
"""

from __future__ import annotations

import numpy as np


def first_sightings(proposals) -> np.ndarray:
    """Boolean mask over proposals: True where a configuration is seen for the first time."""
    p = np.asarray(proposals, dtype=np.int64)
    _, first = np.unique(p, return_index=True)
    mask = np.zeros(len(p), dtype=bool)
    mask[first] = True
    return mask


def recall_curve(unique_order, pstar, space_size: int) -> np.ndarray:
    """r_u for u = 1..|Θ|, given configurations in order of first sighting."""
    u = np.asarray(unique_order, dtype=np.int64)
    pset = np.zeros(space_size, dtype=bool)
    pset[np.asarray(pstar, dtype=np.int64)] = True
    hits = np.cumsum(pset[u]) / max(int(pset.sum()), 1)
    curve = np.empty(space_size)
    curve[: len(hits)] = hits
    curve[len(hits) :] = hits[-1] if len(hits) else 0.0
    return curve


def auc_recall(curve) -> float:
    r = np.asarray(curve, dtype=float)
    return float(((r[:-1] + r[1:]) / 2).sum() / len(r))


def unique_to_full_recall(curve) -> int | None:
    """Smallest u with Recall = 1, or None if never reached."""
    full = np.flatnonzero(np.asarray(curve) >= 1.0 - 1e-12)
    return int(full[0]) + 1 if len(full) else None


def budget_to_full_recall(proposals, pstar) -> int | None:
    """Number of proposals consumed when the last member of P* was first proposed, or None."""
    p = np.asarray(proposals, dtype=np.int64)
    seen, first = np.unique(p, return_index=True)
    target = np.asarray(pstar, dtype=np.int64)
    pos = np.searchsorted(seen, target).clip(max=max(len(seen) - 1, 0))
    if len(seen) == 0 or not (seen[pos] == target).all():
        return None
    return int(first[pos].max()) + 1
