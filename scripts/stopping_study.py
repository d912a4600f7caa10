"""How often is a run that stopped at p_complete ≥ 0.95 really complete, and what did it save?

Runs searches on generated tables (testnav/groundtruth/synthetic.py; every profile at the given seeds) and,
if given, the two mnist5k tables, recording the stopping certificate (testnav/stopping/certificate.py) at
every checkpoint without stopping: the front members found since the checkpoint before
(fresh), the surrogate's calibrated expected number still missing, the measured front's size, and whether
P* was complete right then. The certificate depends only on the proposals so far, so "stop at
the first checkpoint with p_complete ≥ t" is read off the record for any threshold t and any
`share`. The share is chosen on the --train seeds only (the largest whose runs are complete when
stopped ≥ 95 % of the time) and reported on the --test seeds and on mnist5k, held out.

    python scripts/stopping_study.py --train 100 --test 200 --searches random nsga2 tomonav \\
        [--table results/golden/mnist5k.csv]

Writes results/tables/stopping_checkpoints.csv and results/tables/stopping_study.md.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from interval_coverage import metric_tables
from testnav.stopping.certificate import QUIET_RELAX, Certificate, CertifiedOracle, run_certified
from testnav.core.oracle import TableOracle
from testnav import searches
from testnav.groundtruth.synthetic import PROFILES, profile_table
from testnav.core.table import Objectives


SEARCHES = {
    "random": lambda: searches.make("random"),
    "nsga2": lambda: searches.make("nsga2", engine="fast"),
    "tomonav": lambda: searches.make("tomonav"),  # the defaults of conf/search/tomonav.yaml, as `search=tomonav`
}
GRID = (0.1, 0.2, 0.5, 1, 2, 5)
TARGET = 0.95


def tables(train, test, profiles, parquets, test_name="test"):
    for split, seeds in (("train", train), (test_name, test)):
        for s in seeds:
            for name in profiles:
                yield split, f"{name}/{s}", Objectives.from_table(profile_table(name, s))
    for path in parquets:
        for name, obj in metric_tables(path):
            yield "mnist5k", name, obj


def record(split, table, obj, name, seed) -> list[dict]:
    """One run, no stopping: a row per checkpoint."""
    budget = 5 * obj.lattice.size
    oracle = TableOracle(obj)
    cert = Certificate(obj.lattice, seed=seed)
    # TomoNav never repeats before Θ is exhausted, where p_complete = 1: |Θ| proposals suffice
    run_budget = obj.lattice.size if name == "tomonav" else budget
    proposals, _ = run_certified(SEARCHES[name](), CertifiedOracle(oracle, cert), run_budget, seed, oracle.evaluate)
    in_pstar = np.zeros(obj.lattice.size, bool)
    in_pstar[obj.pstar] = True
    found = np.cumsum(in_pstar[proposals] & first(proposals))
    return [
        {
            "split": split,
            "table": table,
            "search": name,
            "seed": seed,
            "space_size": obj.lattice.size,
            "budget": budget,
            "pstar_size": int(in_pstar.sum()),
            "proposals": r.proposals,
            "unique": r.unique,
            "fresh": r.fresh,
            "missing": r.missing,
            "front": r.front,
            "settled": r.settled,
            "recall": found[r.proposals - 1] / in_pstar.sum(),
            "complete": bool(found[r.proposals - 1] == in_pstar.sum()),
        }
        for r in cert.records
    ]


def first(p):
    mask = np.zeros(len(p), bool)
    mask[np.unique(p, return_index=True)[1]] = True
    return mask


def stops(df: pd.DataFrame, share: float, threshold: float = TARGET) -> pd.DataFrame:
    """Per run: where a run with stop_at=threshold would have stopped, and whether P* was complete."""
    tolerance = share * df["front"].clip(1) * np.where(df["settled"], QUIET_RELAX, 1.0)
    p = np.where(df["fresh"] > 0, np.exp(-df["fresh"]), np.exp(-df["missing"] / tolerance))
    fired = df[np.nan_to_num(p) >= threshold]
    runs = df.groupby(["split", "table", "search", "seed"]).tail(1).set_index(["split", "table", "search", "seed"])
    at = fired.groupby(["split", "table", "search", "seed"]).head(1).set_index(["split", "table", "search", "seed"])
    out = runs.copy()
    out.loc[at.index, ["proposals", "unique", "recall", "complete"]] = at[["proposals", "unique", "recall", "complete"]]
    out["fired"] = out.index.isin(at.index)
    out.loc[~out["fired"], "proposals"] = out.loc[~out["fired"], "budget"]  # never fired: the whole budget
    out["saved"] = out["budget"] - out["proposals"]
    return out.reset_index()


def early(st: pd.DataFrame) -> pd.DataFrame:
    """Runs the certificate stopped before Θ was exhausted (where it is 1 by construction)."""
    return st[st["fired"] & (st["unique"] < st["space_size"])]


def choose(df: pd.DataFrame, splits=("train",)) -> float:
    """The largest share whose early stops on the choosing splits were complete ≥ 95 % of the time."""
    ok = [k for k in GRID if (e := early(stops(df[df.split.isin(splits)], k))).empty or e["complete"].mean() >= TARGET]
    return max(ok) if ok else GRID[0]


def markdown(df: pd.DataFrame, chosen: float, splits=("train",)) -> str:
    lines = [
        f"share chosen on the {' + '.join(splits)} split(s): {chosen:g} (grid {', '.join(map(str, GRID))}); "
        f"stop_at = {TARGET}",
        "",
        "| split | search | runs | early stops (before Θ is exhausted) | complete at an early stop "
        "| unique at an early stop (of |Θ|) | unique to full recall | proposals saved (of 5|Θ|), all runs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    full = df[df.complete].groupby(["split", "table", "search", "seed"])["unique"].min().rename("u_full")
    s = stops(df, chosen).join(full, on=["split", "table", "search", "seed"])
    for (split, search), g in s.groupby(["split", "search"], sort=False):
        e = early(g)
        at = f"{e.unique.mean():.0f} ({(e.unique / e.space_size).mean():.0%})" if len(e) else "—"
        lines.append(
            f"| {split} | {search} | {len(g)} | {len(e)} | {int(e.complete.sum())}/{len(e)} | {at} "
            f"| {g.u_full.mean():.0f} | {g.saved.mean():.0f} ({(g.saved / g.budget).mean():.0%}) |"
        )
    lines += [
        "",
        "Per share and split: early stops (before Θ was exhausted) / runs, share of early stops with P* "
        "complete, mean share of the budget saved over all runs",
        "",
        "| share | " + " | ".join(sorted(df.split.unique())) + " |",
        "|---|" + "---|" * df.split.nunique(),
    ]
    for k in GRID:
        st = stops(df, k)
        cells = [
            f"{len(early(g))}/{len(g)}, {early(g).complete.mean() if len(early(g)) else float('nan'):.0%}, "
            f"{(g.saved / g.budget).mean():.0%}"
            for _, g in st.groupby("split")
        ]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=int, nargs="*", default=[100], help="generated-table seeds that choose the share")
    ap.add_argument("--test", type=int, nargs="*", default=[200], help="generated-table seeds held out")
    ap.add_argument("--profiles", nargs="+", default=list(PROFILES), choices=list(PROFILES))
    ap.add_argument("--run-seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--searches", nargs="+", default=list(SEARCHES), choices=list(SEARCHES))
    ap.add_argument(
        "--table",
        action="append",
        default=[],
        help="a mnist5k ground-truth parquet or results/golden/mnist5k.csv (held out)",
    )
    ap.add_argument(
        "--checkpoints", action="append", default=[], help="reuse recorded checkpoints (CSV) instead of running"
    )
    ap.add_argument("--test-name", default="test", help="the split name of the --test seeds' runs")
    ap.add_argument("--choose-on", nargs="+", default=["train"], help="splits the share is chosen on")
    ap.add_argument("--out", default="results/tables/stopping")
    args = ap.parse_args(argv)
    rows = []
    if not args.checkpoints:
        for split, table, obj in tables(args.train, args.test, args.profiles, args.table, args.test_name):
            for name in args.searches:
                for rs in args.run_seeds:
                    t0 = time.perf_counter()
                    rows += record(split, table, obj, name, rs)
                    print(f"{split:7s} {table:20s} {name:8s} seed {rs} ({time.perf_counter() - t0:.1f} s)", flush=True)
    df = pd.concat([pd.DataFrame(rows)] + [pd.read_csv(c) for c in args.checkpoints], ignore_index=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if rows:
        df.to_csv(f"{out}_checkpoints.csv", index=False)
    md = markdown(df, choose(df, args.choose_on), args.choose_on)
    Path(f"{out}_study.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
