"""Empirical coverage of the surrogate's conformal intervals (testnav/searches/tomonav.py):
fit on a design, count how often each unmeasured θ's true δ, ρ falls inside the 68 % and 95 %
intervals. Generated tables (testnav/synthetic.py) at the given seeds, and mnist5k if given.

    python scripts/interval_coverage.py --seeds 200 [--table results/cache/groundtruth/mnist5k-<key>.parquet]

Writes results/tables/coverage.csv and coverage.md.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from testnav.searches.tomonav import Surrogate
from testnav.synthetic import suite
from testnav.table import Objectives

LEVELS = (0.68, 0.95)


def designs(lat, rng):
    low = np.flatnonzero(lat.orders <= 1)
    rest = np.setdiff1d(np.arange(lat.size), low)
    yield "random 25 %", rng.choice(lat.size, lat.size // 4, replace=False)
    yield "order ≤ 1 + 30 random", np.r_[low, rng.choice(rest, 30, replace=False)]


def coverage(tables) -> pd.DataFrame:
    rows = []
    for kind, table, obj in tables:
        y = np.column_stack([obj.delta, obj.rho])
        for design, fit in designs(obj.lattice, np.random.default_rng(0)):
            test = np.setdiff1d(np.arange(obj.lattice.size), fit)
            for surrogate in ("forest", "additive_forest"):
                model = Surrogate(obj.lattice, surrogate, seed=0).fit(fit, y[fit])
                for level in LEVELS:
                    lo, hi = model.interval(level, test)
                    inside = (y[test] >= lo) & (y[test] <= hi)
                    rows.append({"tables": kind, "table": table, "design": design, "surrogate": surrogate,
                                 "level": level, "delta": inside[:, 0].mean(), "rho": inside[:, 1].mean()})
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    lines = ["| tables | design | surrogate | nominal | coverage δ | coverage ρ | worst table (δ, ρ) |", "|---|---|---|---|---|---|---|"]
    for (kind, design, surrogate, level), g in df.groupby(["tables", "design", "surrogate", "level"], sort=False):
        worst = g.loc[(g[["delta", "rho"]] - level).abs().max(axis=1).idxmax()]
        lines.append(f"| {kind} | {design} | {surrogate} | {level:.0%} | {g.delta.mean():.3f} | {g.rho.mean():.3f} "
                     f"| {worst.delta:.3f}, {worst.rho:.3f} ({worst.table}) |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="*", default=[200], help="generated-table seeds (held out)")
    ap.add_argument("--table", action="append", default=[], help="a mnist5k ground-truth parquet (ssim and kid)")
    ap.add_argument("--out", default="results/tables/coverage")
    args = ap.parse_args(argv)
    tables = [("generated", f"{n}/{s}", Objectives.from_table(df)) for n, s, df in suite(args.seeds)]
    for path in args.table:
        df = pd.read_parquet(path)
        tables += [("mnist5k", f"mnist5k_{c}", Objectives.from_table(df, c, sign)) for c, sign in (("ssim", 1.0), ("kid", -1.0))]
    df = coverage(tables)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out.with_suffix(".csv"), index=False)
    out.with_suffix(".md").write_text(markdown(df))
    print(markdown(df))
    return 0


if __name__ == "__main__":
    sys.exit(main())
