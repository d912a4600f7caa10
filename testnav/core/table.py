"""Ground-truth tables: validation, loading and the normalised objectives a replay uses.

A table has one row per configuration θ of the full lattice, integer level columns
t1..tn, a `delta` column and one column per fidelity metric (raw values). The replay contract
(DESIGN.md) also accepts any CSV/Parquet with t1..tn, delta and rho.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserError
from .lattice import Lattice
from .pareto import pareto_front


def level_columns(df: pd.DataFrame) -> list[str]:
    cols = sorted((c for c in df.columns if re.fullmatch(r"t\d+", str(c))), key=lambda c: int(c[1:]))
    return cols


def read_table(path) -> pd.DataFrame:
    p = Path(path)
    if not p.is_file():
        raise UserError(
            f"groundtruth.table={path}: no such file (give a .csv or .parquet table with t1..tn, delta, rho)"
        )
    try:
        if p.suffix.lower() == ".csv":
            return pd.read_csv(p)
        if p.suffix.lower() in (".parquet", ".pq"):
            return pd.read_parquet(p)
    except Exception as e:  # unreadable or truncated file
        raise UserError(f"groundtruth.table={path}: cannot be read ({type(e).__name__}: {e})".splitlines()[0]) from e
    raise UserError(f"groundtruth.table={path}: unknown format '{p.suffix}' (valid: .csv, .parquet)")


def validate_table(df: pd.DataFrame, value_columns: list[str], source: str = "table") -> Lattice:
    """Check a table covers the full lattice exactly once with finite values; return its lattice."""
    tcols = level_columns(df)
    n = len(tcols)
    expected = [f"t{i}" for i in range(1, n + 1)]
    if n == 0 or tcols != expected:
        raise UserError(
            f"{source}: level columns {tcols or 'none'} found; need t1..tn (e.g. t1,t2,t3,t4) "
            f"(columns present: {', '.join(map(str, df.columns))})"
        )
    missing = [c for c in value_columns if c not in df.columns]
    if missing:
        raise UserError(
            f"{source}: missing column(s) {', '.join(missing)} (present: {', '.join(map(str, df.columns))})"
        )
    if len(df) == 0:
        raise UserError(f"{source}: table is empty; it needs one row per configuration of the lattice")
    levels = df[tcols].to_numpy()
    if (
        not np.issubdtype(levels.dtype, np.number)
        or not np.isfinite(levels.astype(float)).all()
        or (levels != np.round(levels)).any()
    ):
        raise UserError(f"{source}: level columns t1..t{n} must hold integers 0..ℓ-1")
    levels = levels.astype(np.int64)
    if levels.min() < 0:
        raise UserError(f"{source}: negative level {levels.min()} in t1..t{n}; levels run 0..ℓ-1")
    lattice = Lattice(n, int(levels.max()) + 1)
    for c in value_columns:
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(v))
        if len(bad):
            raise UserError(
                f"{source}: column {c} has a non-finite value ({df[c].iloc[bad[0]]}) at θ={tuple(levels[bad[0]].tolist())}; every value must be a finite number"
            )
    idx = lattice.index(levels)
    counts = np.bincount(idx, minlength=lattice.size)
    if (counts > 1).any():
        dup = lattice.theta(np.flatnonzero(counts > 1)[0])
        raise UserError(
            f"{source}: configuration θ={tuple(dup.tolist())} appears {counts.max()} times; each θ must appear once"
        )
    if (counts == 0).any():
        gone = np.flatnonzero(counts == 0)
        raise UserError(
            f"{source}: {len(gone)} of {lattice.size} configurations missing (first θ={tuple(lattice.theta(gone[0]).tolist())}); "
            f"the table must cover all of {{0..{lattice.levels - 1}}}^{n}"
        )
    return lattice


def minmax(x: np.ndarray) -> np.ndarray:
    """Min–max normalise over Θ; a constant objective maps to 0 (it cannot rank anything)."""
    x = np.asarray(x, dtype=float)
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else np.zeros_like(x)


@dataclass(frozen=True)
class Objectives:
    """Normalised (δ, ρ) for every θ, indexed by lattice index, the ground-truth front P*,
    and any extra per-configuration signals a search may optimise (coverage, surprise…)."""

    lattice: Lattice
    delta: np.ndarray
    rho: np.ndarray
    extra: dict = field(default_factory=dict)
    delta_span: float = 1.0  # the raw δ range over Θ that `delta` was divided by (1: raw values)

    @property
    def pstar(self) -> np.ndarray:
        """Lattice indices of P*: the non-dominated perturbed configurations.

        θ = 0 (nothing applied) is the clean reference, not a test: it has δ = 0 and the
        best possible ρ, so it would sit on every front. The paper's front counts by order
        1–4 add up to |P*| (e.g. SSIM 27 = 9+12+4+2), so it is left out; it stays in Θ,
        proposable like any other configuration.
        """
        perturbed = np.arange(1, self.lattice.size)
        return perturbed[pareto_front(self.delta[1:], self.rho[1:])]

    def column(self, name: str) -> np.ndarray:
        if name == "delta":
            return self.delta
        if name == "rho":
            return self.rho
        return self.extra[name]

    @classmethod
    def from_table(
        cls, df: pd.DataFrame, rho_column: str = "rho", rho_sign: float = 1.0, source: str = "table", signals=()
    ):
        """Validate a table and normalise its objectives; `signals` are extra columns to carry along."""
        missing = [c for c in signals if c not in df.columns]
        if missing:
            raise UserError(
                f"{source}: no column {', '.join(missing)} for the chosen search "
                f"(columns present: {', '.join(map(str, df.columns))})"
            )
        lattice = validate_table(df, ["delta", rho_column, *signals], source)
        order = np.argsort(lattice.index(df[level_columns(df)].to_numpy(np.int64)))
        delta = df["delta"].to_numpy(float)[order]
        rho = rho_sign * df[rho_column].to_numpy(float)[order]
        extra = {c: minmax(df[c].to_numpy(float)[order]) for c in signals}
        span = float(np.ptp(delta))
        return cls(lattice, minmax(delta), minmax(rho), extra, span if span > 0 else 1.0)
