"""Collect run summaries under a results folder into one tidy frame (one row per run)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def load_summaries(root) -> pd.DataFrame:
    """Every search run's summary under `root`, one row per run: the figures' scanner
    (testnav.figures.loader.scan_runs), so memoised copies under cache/ count once here too."""
    from .loader import scan_runs

    return scan_runs(Path(root), [])


def method_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean ± sd over seeds of AUC-Recall and unique configurations to full recall, per table and method
    (and, where summaries have them, AUC-Recall and inferences to full recall on the inference axis)."""
    g = df.groupby(["benchmark", "fidelity", "search"])
    out = g.agg(
        runs=("seed", "nunique"),
        auc_mean=("auc_recall", "mean"),
        auc_sd=("auc_recall", "std"),
        final_recall=("final_recall", "mean"),
        full_recall_runs=("unique_to_full_recall", "count"),
        u_full_mean=("unique_to_full_recall", "mean"),
        u_full_sd=("unique_to_full_recall", "std"),
    )
    if "auc_recall_inferences" in df:  # the cost-aware view (testnav/groundtruth/inferences.py), where runs have it
        extra = g.agg(
            auc_inf_mean=("auc_recall_inferences", "mean"),
            auc_inf_sd=("auc_recall_inferences", "std"),
            inf_full_mean=("inferences_to_full_recall", "mean"),
            inf_full_sd=("inferences_to_full_recall", "std"),
        )
        out = out.join(extra)
    return out.reset_index()
