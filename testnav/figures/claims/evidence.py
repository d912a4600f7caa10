"""What the claims are checked on: the runs and ground truths of a `loader.Results`, and the study
tables under tables/ (the §3.3 grid's, and TestifAI's, one folder per benchmark)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .rules import Claim, finite, missing

STUDIES = ("per_test_errors", "queries", "ordered_vs_random", "inferences", "estimates")


class Evidence:
    """The tables at hand: a `loader.Results` (runs, ground truths, recall curves) and the folder of
    study tables (default: <results>/tables)."""

    def __init__(self, res, tables_dir=None):
        self.res = res
        self.runs = res.runs if not res.runs.empty else pd.DataFrame(columns=["benchmark", "fidelity", "search"])
        self.tables_dir = Path(tables_dir) if tables_dir else Path(res.root) / "tables"

    def cols(self) -> list[tuple[str, str]]:
        """Every benchmark–fidelity with runs."""
        if self.runs.empty:
            return []
        return sorted(set(map(tuple, self.runs[["benchmark", "fidelity"]].drop_duplicates().to_numpy())))

    def values(self, b, f, s, key="auc_recall") -> np.ndarray:
        """One summary field over the seeds of search s on b · f."""
        r = self.runs
        v = r[(r["benchmark"] == b) & (r["fidelity"] == f) & (r["search"] == s)]
        return v[key].to_numpy(float) if key in v else np.array([])

    def seeds(self, b, f) -> int:
        r = self.runs
        return int(r[(r["benchmark"] == b) & (r["fidelity"] == f)]["seed"].nunique()) if len(r) else 0

    def space(self, b, f) -> int | None:
        """|Θ| of b · f: its ground truth's, else what its runs say."""
        gt = self.res.truths.get((b, f))
        if gt is not None:
            return len(gt.points)
        r = self.runs[(self.runs["benchmark"] == b) & (self.runs["fidelity"] == f)]
        return int(r["space_size"].dropna().iloc[0]) if "space_size" in r and r["space_size"].notna().any() else None

    def studies(self) -> list[Study]:
        root = self.tables_dir / "testifai"
        return [Study.read(p) for p in sorted(p for p in root.iterdir() if p.is_dir())] if root.is_dir() else []

    def items(self, scope: str) -> list[tuple]:
        """The arguments a claim of `scope` (registry.SCOPES) is checked on, one tuple per row."""
        if scope == "once":
            return [()]
        if scope == "column":
            return self.cols()
        if scope == "benchmark":
            return [(b,) for b in sorted({b for b, _ in self.cols()})]
        if scope == "truths":
            return [(b,) for b in sorted({b for b, _ in self.res.truths})]
        return [(s,) for s in self.studies()]


@dataclass
class Study:
    """One benchmark's TestifAI study tables (tables/testifai/<name>/, `python run.py stage=study`);
    None where a table is absent."""

    name: str
    per_test: pd.DataFrame | None  # per_test_errors.csv
    queries: pd.DataFrame | None
    ordered: pd.DataFrame | None  # ordered_vs_random.csv
    inferences: pd.DataFrame | None
    estimates: pd.DataFrame | None  # the mixed estimate against the forest

    @classmethod
    def read(cls, folder: Path) -> Study:
        read = {n: pd.read_csv(folder / f"{n}.csv") if (folder / f"{n}.csv").exists() else None for n in STUDIES}
        return cls(folder.name, *(read[n] for n in STUDIES))

    def lacking(self, where: str, statement: str) -> Claim:
        """The row of a claim whose study table is absent."""
        return Claim(
            "TestifAI", where, statement, self.name, "—", missing("no study table (python run.py stage=study)")
        )

    def order_errors(self) -> str:
        """How 4D's unmeasured share and its error by order compare with 3D's ('' without a 4D study)."""
        pt = self.per_test
        if pt is None or not (pt.tomography == "4D").any():
            return ""
        d4 = pt[pt.tomography == "4D"]
        by = d4.groupby("order").abs_error.mean()
        share = (d4.order >= 3).mean()
        return (
            f"4D leaves {share:.0%} of Θ unmeasured (order ≥ 3) against {(pt[pt.tomography == '3D'].order >= 3).mean():.0%} in 3D, "
            "and its error grows with order (mean |error| "
            + ", ".join(f"Θ{int(k)} {v:.3f}" for k, v in by.items() if k >= 3)
            + ")"
        )


def mean_sd(values) -> str:
    """'mean ± sd' over seeds ('—' for none, the value alone for one)."""
    v = finite(values)
    if not len(v):
        return "—"
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if len(v) > 1 else f"{v.mean():.3f}"


def scope_name(b: str, f: str) -> str:
    return f"{b} · {f}"


def dims(label) -> int:
    """The dimension of a tomography ('3D' -> 3)."""
    return int(str(label).rstrip("D"))


def mse(d: pd.DataFrame, column: str, mask=None) -> float:
    d = d if mask is None else d[mask]
    return float(((d[column] - d["r_true"]) ** 2).mean())


def aggregate(d: pd.DataFrame) -> float:
    """R̂(Q) − R(Q) over the tests in d (the aggregate error of the query that selects them)."""
    return float(d.r_pred.mean() - d.r_true.mean())


def orthants(d: pd.DataFrame) -> list[tuple[str, float]]:
    """The 2^n orthant queries of a tomography (each family ≤ 2 or ≥ 3, as Q1–Q8 on three), with their
    aggregate errors: named by the families at ≥ 3, e.g. 't1 t2 ≥ 3'."""
    cols = [c for c in (f"t{i}" for i in range(1, 9)) if c in d and d[c].notna().all()]
    out = []
    for high in np.ndindex(*(2,) * len(cols)):
        m = np.ones(len(d), bool)
        for c, h in zip(cols, high):
            m &= (d[c] >= 3).to_numpy() if h else (d[c] <= 2).to_numpy()
        if m.any():
            name = " ".join(c for c, h in zip(cols, high) if h)
            out.append(((name + " ≥ 3") if name else "all ≤ 2", aggregate(d[m])))
    return out


def low_order_tests(label, ovr) -> int:
    """|Θ≤2| of a tomography, from its dimension and its level count (|Θ| = levels^dims)."""
    n = dims(label)
    levels = round(int(ovr[ovr.tomography == label].tests.max()) ** (1 / n))
    return sum(math.comb(n, j) * (levels - 1) ** j for j in range(3))


def by_order(d: pd.DataFrame, column: str) -> str:
    """'mean |error| by order: Θ1 …, Θ2 …' over one tomography's per-test rows."""
    means = d.groupby("order")[column].mean()
    return "mean |error| by order: " + ", ".join(f"Θ{int(k)} {v:.3f}" for k, v in means.items())
