"""Empirical coverage of the surrogate's conformal intervals (testnav/searches/tomonav.py):
fit on a design, count how often each unmeasured θ's true δ, ρ falls inside the 68 % and 95 %
intervals. Generated tables (testnav/groundtruth/synthetic.py) at the given seeds, and mnist5k if given.

    python scripts/interval_coverage.py --seeds 200 --table results/golden/mnist5k.csv --designs 6

A table is a ground-truth parquet (ssim and kid columns) or the golden digest (rho_ssim,
rho_kid). Each table is fitted on `--designs` independent designs (seeds 0, 1, …) and the
coverage averaged: conformal coverage is a promise over the draw of the measured points, and
one design of 51 points moves a 68 % coverage by ±8 points on its own.

Writes results/tables/coverage.csv and coverage.md.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from testnav.core.table import Objectives
from testnav.groundtruth.synthetic import suite
from testnav.stopping.level_surrogate import Surrogate

LEVELS = (0.68, 0.95)


def designs(lat, rng):
    low = np.flatnonzero(lat.orders <= 1)
    rest = np.setdiff1d(np.arange(lat.size), low)
    yield "random 25 %", rng.choice(lat.size, lat.size // 4, replace=False)
    yield "order ≤ 1 + 30 random", np.r_[low, rng.choice(rest, 30, replace=False)]


def coverage(tables, n_designs: int = 1, trees: int = 100) -> pd.DataFrame:
    rows = []
    for kind, table, obj in tables:
        y = np.column_stack([obj.delta, obj.rho])
        for seed in range(n_designs):
            for design, fit in designs(obj.lattice, np.random.default_rng(seed)):
                test = np.setdiff1d(np.arange(obj.lattice.size), fit)
                for surrogate in ("forest", "additive_forest"):
                    model = Surrogate(obj.lattice, surrogate, n_estimators=trees, seed=seed).fit(fit, y[fit])
                    for level in LEVELS:
                        lo, hi = model.interval(level, test)
                        inside = (y[test] >= lo) & (y[test] <= hi)
                        rows.append(
                            {
                                "tables": kind,
                                "table": table,
                                "design": design,
                                "surrogate": surrogate,
                                "seed": seed,
                                "level": level,
                                "delta": inside[:, 0].mean(),
                                "rho": inside[:, 1].mean(),
                            }
                        )
    df = pd.DataFrame(rows)
    return (
        df.groupby(["tables", "table", "design", "surrogate", "level"], sort=False)[["delta", "rho"]]
        .mean()
        .reset_index()
    )


def metric_tables(path: str):
    """(name, Objectives) for each fidelity column of a ground-truth parquet or golden csv."""
    df = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_csv(path)
    columns = (("rho_ssim", 1.0), ("rho_kid", 1.0)) if "rho_ssim" in df else (("ssim", 1.0), ("kid", -1.0))
    return [(f"mnist5k_{c.removeprefix('rho_')}", Objectives.from_table(df, c, sign)) for c, sign in columns]


def markdown(df: pd.DataFrame) -> str:
    lines = [
        "| tables | design | surrogate | nominal | coverage δ | coverage ρ | worst table (δ, ρ) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (kind, design, surrogate, level), g in df.groupby(["tables", "design", "surrogate", "level"], sort=False):
        worst = g.loc[(g[["delta", "rho"]] - level).abs().max(axis=1).idxmax()]
        lines.append(
            f"| {kind} | {design} | {surrogate} | {level:.0%} | {g.delta.mean():.3f} | {g.rho.mean():.3f} "
            f"| {worst.delta:.3f}, {worst.rho:.3f} ({worst.table}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[200], help="generated-table seeds (held out)")
    ap.add_argument(
        "--table",
        action="append",
        default=[],
        help="a mnist5k ground-truth parquet (ssim and kid) or results/golden/mnist5k.csv",
    )
    ap.add_argument("--designs", type=int, default=1, help="independent designs per table (coverage averaged)")
    ap.add_argument("--trees", type=int, default=100, help="the forest's trees (the certificate's count by default)")
    ap.add_argument("--out", default="results/tables/coverage")
    args = ap.parse_args(argv)
    tables = [("generated", f"{n}/{s}", Objectives.from_table(df)) for n, s, df in suite(args.seeds)]
    for path in args.table:
        tables += [("mnist5k", name, obj) for name, obj in metric_tables(path)]
    df = coverage(tables, args.designs, args.trees)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(markdown(df))
    print(markdown(df))
    return 0


if __name__ == "__main__":
    sys.exit(main())
