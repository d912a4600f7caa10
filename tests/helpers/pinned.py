"""Digests of what a scan, a comparison and a query give a person, for the tests that pin them.

A refactor that moves code must leave these outputs as they were (issue 73). Each digest is a
sha256 over the tables as CSV text and the summaries as sorted JSON, with the wall-clock fields
left out (they change from run to run) and every float written to 6 significant digits: a ground
truth's ρ reproduces across machines only to about 1e-6 (docs/reproducibility.md), and a digest
pinned on one machine must hold on another. Left out too: the findings' `digests.benchmark`, the
ground truth's cache key, which hashes the code that computes the table (benchmarks/base.py) and
so moves with any edit of it, by design. Any change a person could see changes the digest.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

CLOCK = ("seconds", "projected_seconds", "seconds_per_configuration", "wall_seconds", "evaluation_seconds")


def rounded(x):
    """`x` with floats at 6 significant digits and the wall-clock fields dropped, recursively."""
    if isinstance(x, dict):
        return {str(k): rounded(v) for k, v in x.items() if k not in CLOCK}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [rounded(v) for v in x]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(f"{float(x):.6g}")
    return x


def text_of(df: pd.DataFrame) -> str:
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object:
            out[c] = [json.dumps(rounded(v)) if isinstance(v, (list, tuple, np.ndarray)) else v for v in out[c]]
    return out.to_csv(index=False, float_format="%.6g")


def digest(frames: dict, meta: dict) -> str:
    h = hashlib.sha256()
    for name in sorted(frames):
        h.update(f"{name}\n{text_of(frames[name])}".encode())
    h.update(json.dumps(rounded(meta), sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def findings_digest(path) -> str:
    """The directory `Findings.save` wrote: its three tables, every configuration with its per-input
    outcomes, and findings.json."""
    from pathlib import Path

    path = Path(path)
    frames = {n: pd.read_csv(path / f"{n}.csv") for n in ("families", "interactions", "failure_modes")}
    frames["configurations"] = pd.read_parquet(path / "configurations.parquet")
    meta = json.loads((path / "findings.json").read_text())
    meta.get("digests", {}).pop("benchmark", None)  # the ground truth's cache key: a digest of its code
    return digest(frames, meta)


def comparison_digest(c) -> str:
    """A Comparison: its table, summary, regressions, improvements, families, pairs, fronts, predicted
    configurations, its printed text and the gate's line."""
    frames = {
        "table": c.table,
        "families": c.families,
        "pairs": c.pairs,
        "fronts": c.fronts,
        "predicted": c.predicted,
        "regressions": c.regressions,
        "improvements": c.improvements,
    }
    verdict = None if c.verdict is None else c.verdict.summary
    return digest(frames, {"summary": c.summary, "text": str(c), "verdict": verdict, "line": c.line()})
