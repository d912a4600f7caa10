"""Paired tests of two versions on the same inputs: McNemar's exact test per configuration and the
multiple-comparison control over configurations (statsmodels). Shared by the comparison
(pipeline/compare.py) and its warm start (pipeline/warm.py)."""

from __future__ import annotations

import numpy as np

from ..core.paired import mcnemar_exact  # noqa: F401  (the comparison's test, shared with the findings)

CORRECTIONS = {"holm": ("holm", "Holm"), "bh": ("fdr_bh", "Benjamini–Hochberg")}


def adjust(pvalues, confidence: float, correction: str) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p-values) over a family of tests (statsmodels' multipletests)."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, float)
    if not len(p):
        return np.zeros(0, bool), np.zeros(0)
    reject, adjusted, _, _ = multipletests(p, alpha=1 - confidence, method=CORRECTIONS[correction][0])
    return reject, adjusted
