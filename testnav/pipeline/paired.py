"""Paired tests of two versions on the same inputs: McNemar's exact test per configuration and the
multiple-comparison control over configurations (statsmodels). Shared by the comparison
(pipeline/compare.py) and its warm start (pipeline/warm.py)."""

from __future__ import annotations

import numpy as np

CORRECTIONS = {"holm": ("holm", "Holm"), "bh": ("fdr_bh", "Benjamini–Hochberg")}


def mcnemar_exact(before: np.ndarray, after: np.ndarray) -> tuple[int, int, float]:
    """(b, c, p): inputs right before and wrong after (b), wrong before and right after (c), and the
    two-sided p-value of McNemar's exact test on the paired outcomes (statsmodels)."""
    from statsmodels.stats.contingency_tables import mcnemar

    before, after = np.asarray(before, bool), np.asarray(after, bool)
    b, c = int((before & ~after).sum()), int((~before & after).sum())
    if b + c == 0:
        return 0, 0, 1.0
    both, neither = int((before & after).sum()), int((~before & ~after).sum())
    return b, c, float(mcnemar([[both, b], [c, neither]], exact=True).pvalue)


def adjust(pvalues, confidence: float, correction: str) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p-values) over a family of tests (statsmodels' multipletests)."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, float)
    if not len(p):
        return np.zeros(0, bool), np.zeros(0)
    reject, adjusted, _, _ = multipletests(p, alpha=1 - confidence, method=CORRECTIONS[correction][0])
    return reject, adjusted
