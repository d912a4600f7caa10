"""How do the searches scale with the lattice? Every search, the stopping certificate on, on
generated tables (testnav/groundtruth/synthetic.py) of growing |Θ| = ℓ^n.

    python scripts/scale_study.py --sizes 4x6 6x6 8x6 --profiles pairs additive --seeds 100 101 \\
        [--searches nsga2 tomonav] [--out results/tables/scale]

    python scripts/scale_study.py --sizes none --real mnist5k_c6:ssim --seeds 100 101 102 103 104

A size is `n`x`ℓ`; `--real BENCHMARK:FIDELITY` adds a benchmark's own ground truth (computed once
into results/cache), run with each seed as the run seed. Budgets: 5|Θ| where |Θ| ≤ 10⁴, otherwise 5,000 and 20,000. Each run forks a
child process, so its peak memory (resident set, the table included) is its own. Per run:
AUC-Recall@P* against the table's exact P*, unique configurations to full recall, the search's
wall time per proposal (the certificate's estimates excluded, the table's lookups included; the
certificate's share of the run is its own column), and the certificate (never stopping, so
"stop at 0.95" is read off its checkpoints): where a run with stop_at=0.95 would have stopped,
whether P* was complete there, and that stop over the unique configurations to full recall.

Writes <out>.csv (a row per run) and <out>.md (means per size and search), appending to an
existing csv so that subsets run at different times add up.
"""

import argparse
import functools
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from testnav import pipeline
from testnav.core.recall import auc_recall, first_sightings, recall_curve, unique_to_full_recall
from testnav.core.table import Objectives
from testnav.groundtruth.synthetic import PROFILES, synthetic_table
from testnav.stopping.certificate import TUNED

ROOT = Path(__file__).resolve().parents[1]
SIZES = [(n, lv) for n in (4, 5, 6, 8) for lv in (4, 6, 8) if lv**n <= 2_000_000]
# profiles that fix their own n and ℓ are left out: the size is the study's variable
STUDY_PROFILES = [k for k, v in PROFILES.items() if "n" not in v and "levels" not in v]
SEARCHES = ("nsga2", "tomonav", "ga", "greedy", "random")
STOP_AT = 0.95


def run_spec(name: str, budget: int, seed: int, stop_at: float | None) -> pipeline.RunSpec:
    """The study's searches by name (conf/search), `nsga2_fast` and `ga` on the fast engine, with their
    own populations (not fitted to the lattice); the certificate on, stopping at `stop_at` (None: never)."""
    engine = {"nsga2_fast": "fast", "ga": "fast"}
    return pipeline.RunSpec(
        "nsga2" if name == "nsga2_fast" else name,
        overrides={"engine": engine[name]} if name in engine else {},
        budget=int(budget),  # a rerun reads them back from the csv as numpy integers
        seed=int(seed),
        certificate=pipeline.CertificateConfig(stop_at=stop_at),
        fit=False,
    )


def generated(profile: str, n: int, levels: int, seed: int) -> Objectives:
    return Objectives.from_table(synthetic_table(**{**PROFILES[profile], "n": n, "levels": levels}, seed=seed))


@functools.cache
def real_table(benchmark: str, fidelity: str = "ssim") -> Objectives:
    """A benchmark's ground truth (computed once into results/cache), δ and the fidelity's ρ."""
    from testnav import fidelity as fid
    from testnav.groundtruth.compute import compute_groundtruth
    from testnav.pipeline import compose_benchmark

    path = compute_groundtruth(compose_benchmark([f"benchmark={benchmark}"]), ROOT / "results/cache")
    return Objectives.from_table(pd.read_parquet(path), fidelity, fid.sign(fidelity), source=benchmark)


def budgets(size: int) -> list[int]:
    return [5 * size] if size <= 10_000 else [5_000, 20_000]


def one_run(obj: Objectives, search: str, budget: int, seed: int, stop_at: float | None = None) -> dict:
    """One run; with `stop_at` it really stops there (its cost share is then that of a run with
    the certificate on), else it runs its budget and the stop is read off the checkpoints."""
    run = pipeline.replay(run_spec(search, budget, seed, stop_at), obj, {"table": "(generated or benchmark table)"})
    proposals = obj.lattice.index(run.trace[[f"t{i + 1}" for i in range(obj.lattice.n)]].to_numpy(np.int64))
    wall, cert_seconds = run.summary["search_seconds"], run.summary["certificate_seconds"]
    first = first_sightings(proposals)
    curve = recall_curve(proposals[first], obj.pstar, obj.lattice.size)
    full = unique_to_full_recall(curve)
    uniq = np.cumsum(first)
    in_pstar = np.zeros(obj.lattice.size, bool)
    in_pstar[obj.pstar] = True
    found = np.cumsum(in_pstar[proposals] & first)
    # every checkpoint: (proposals, unique, the surrogate's `missing` or None where it was not
    # fitted, P* complete, fresh, |measured front|, p_complete, the front settled)
    checkpoints = [
        (
            r.proposals,
            r.unique,
            None if r.complete.missing != r.complete.missing else float(r.complete.missing),
            bool(found[r.proposals - 1] == len(obj.pstar)),
            r.complete.fresh,
            r.front,
            r.complete.p,
            r.complete.settled,
        )
        for r in run.checkpoints
    ]
    stop = next(((r.proposals, r.complete.p) for r in run.checkpoints if r.complete.p >= STOP_AT), None)
    stop_unique = int(uniq[stop[0] - 1]) if stop else None
    return {
        "auc": auc_recall(curve),
        "final_recall": float(curve[min(int(first.sum()), obj.lattice.size) - 1]),
        "unique": int(first.sum()),
        "unique_to_full": full,
        "wall_s": wall,
        "search_ms_per_proposal": 1000 * (wall - cert_seconds) / len(proposals),
        "cert_share": cert_seconds / wall if wall else 0.0,
        "cert_checkpoints": len(run.checkpoints),
        "p_complete_last": run.checkpoints[-1].complete.p if run.checkpoints else 0.0,
        "stop_unique": stop_unique,
        "stop_complete": None if stop is None else bool(full is not None and stop_unique >= full),
        "stop_ratio": None if stop is None or not full else stop_unique / full,
        "checkpoints": json.dumps(checkpoints),
    }


def forked(fn, *args) -> dict:
    """fn(*args) in a child process: its result and the child's peak resident memory."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            # one thread per run (BLAS, OpenMP, the forests' trees): two study processes on two
            # cores would otherwise oversubscribe them, slowing the searches that call BLAS and
            # fit forests (TomoNav) more than the rest
            os.environ["TESTNAV_TREE_THREADS"] = "1"
            with threadpool_limits(limits=1):
                out = {"ok": True, **fn(*args)}
        except Exception as e:  # reported, not raised: one failing run must not end the study
            out = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status, usage = os.wait4(pid, 0)
    out = json.loads(text) if text else {"ok": False, "error": f"child ended with status {status}"}
    out["peak_mb"] = usage.ru_maxrss / 1024  # kB on Linux
    return out


def summarise(df: pd.DataFrame) -> str:
    ok = df[df["ok"]]
    lines = [
        "| |Θ| (ℓ^n) | profile | budget | search | runs | AUC-Recall | unique to full recall (reached) | ms / proposal | peak MB | cert share | stop@0.95 (Θ exhausted included): fired, complete | median stop / full |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (size, lat, profile, budget, search), g in ok.groupby(
        ["space_size", "lattice", "profile", "budget", "search"], sort=True
    ):
        full = g["unique_to_full"].dropna()
        fired = g["stop_unique"].notna()
        comp = g.loc[fired, "stop_complete"].astype(bool)
        ratio = g["stop_ratio"].dropna()
        lines.append(
            f"| {size:,} ({lat}) | {profile} | {budget:,} | {search} | {len(g)} | {g['auc'].mean():.3f} ± {g['auc'].std(ddof=0):.3f} "
            f"| {'—' if full.empty else f'{full.mean():,.0f}'} ({len(full)}/{len(g)}) | {g['search_ms_per_proposal'].mean():.3f} "
            f"| {g['peak_mb'].max():,.0f} | {100 * g['cert_share'].mean():.0f} % "
            f"| {fired.sum()}/{len(g)}, {comp.sum()}/{fired.sum()} "
            f"| {'—' if ratio.empty else f'{ratio.median():.2f}'} |"
        )
    return "\n".join(lines)


def unsettled_stop(row) -> float:
    """Where the run would have stopped at 0.95 without the settled front's wider tolerance
    (TUNED.quiet_relax): p_complete^quiet_relax at settled checkpoints, as it was before; NaN if never."""
    for cp in json.loads(row["checkpoints"]):
        if (cp[6] ** TUNED.quiet_relax if cp[7] else cp[6]) >= STOP_AT:
            return cp[1]
    return np.nan


def records_settling(df: pd.DataFrame) -> bool:
    """Whether every run recorded the settled flag at its checkpoints (runs before 2026-12-05 did not)."""
    return len(df) > 0 and all(all(len(cp) >= 8 for cp in json.loads(c)) for c in df["checkpoints"])


def early_stops(g: pd.DataFrame, at: pd.Series, early_median: bool = False) -> str:
    """'early stops | complete | median stop / full' of runs stopping at unique `at` (NaN: never);
    the median over every stop, or with `early_median` over the early ones only."""
    early = g[at.notna() & (at < g["space_size"])]
    ratio = (at[early.index] / early["unique_to_full"] if early_median else at / g["unique_to_full"]).dropna()
    complete = int((at[early.index] >= early["unique_to_full"]).sum())
    return f"{len(early)} | {complete}/{len(early)} | {f'{ratio.median():.2f}' if len(ratio) else '—'}"


def stop_rules(df: pd.DataFrame) -> str:
    """Early stops only (before Θ is exhausted, where p_complete = 1 by construction): how many
    runs the certificate would have stopped at 0.95, how many of those had all of P*, and the
    median stop over the unique configurations to full recall; where the runs recorded it, the
    same without the settled front's wider tolerance."""
    ok = df[df["ok"]].reset_index(drop=True)  # unique labels: the stops are aligned by them
    both = records_settling(ok)
    former = ok.apply(unsettled_stop, axis=1) if both else None
    lines = [
        "| |Θ| (ℓ^n) | budget | search | runs | early stops | complete when stopped early | median stop / unique to full |"
        + (" without settling: early stops | complete | median |" if both else ""),
        "|---|---|---|---|---|---|---|" + ("---|---|---|" if both else ""),
    ]
    for (size, lat, budget, search), g in ok.groupby(["space_size", "lattice", "budget", "search"], sort=True):
        lines.append(
            f"| {size:,} ({lat}) | {budget:,} | {search} | {len(g)} | {early_stops(g, g['stop_unique'])} |"
            + (f" {early_stops(g, former[g.index])} |" if both else "")
        )
    return "\n".join(lines)


def certificate_summary(df: pd.DataFrame, search: str = "tomonav") -> str:
    """Issue 30's reading of the certificate for one search: per lattice up to 10⁴ configurations
    (and each real table), and over every lattice above it per budget, the early stops, how many
    were complete and the median stop over full recall (with and without settling, as
    `stop_rules`), the median over the early stops."""
    ok = df[df["ok"] & (df["search"] == search)].reset_index(drop=True)
    if ok.empty:
        return ""
    both = records_settling(ok)
    if both:
        ok["former"] = ok.apply(unsettled_stop, axis=1)
    big = ok["space_size"] > 10_000
    ok["group"] = np.where(
        ok["profile"].str.contains(":"),
        ok["profile"],
        np.where(big, "above 10⁴, " + ok["budget"].map("{:,}".format), ok["lattice"]),
    )
    lines = [
        f"| {search}: lattice | runs | early stops | complete | median early stop / full |"
        + (" without settling: early stops | complete | median |" if both else ""),
        "|---|---|---|---|---|" + ("---|---|---|" if both else ""),
    ]
    order = ok.groupby("group")["space_size"].max().sort_values(kind="stable").index
    for group in order:
        g = ok[ok["group"] == group]
        lines.append(
            f"| {group} | {len(g)} | {early_stops(g, g['stop_unique'], True)} |"
            + (f" {early_stops(g, g['former'], True)} |" if both else "")
        )
    return "\n".join(lines)


def what_was_run(df: pd.DataFrame) -> str:
    """One line per lattice size: the profiles, table seeds and budgets present in the csv."""
    lines = []
    for (size, lat), g in df.groupby(["space_size", "lattice"], sort=True):
        seeds = sorted(g["seed"].unique())
        lines.append(
            f"* {lat} = {size:,}: profiles {', '.join(sorted(g['profile'].unique()))}; seeds "
            f"{', '.join(map(str, seeds))}; budgets {', '.join(f'{b:,}' for b in sorted(g['budget'].unique()))}; "
            f"searches {', '.join(sorted(g['search'].unique()))} ({len(g)} runs)"
        )
    return "\n".join(lines)


def kept_preamble(md: Path) -> str:
    """The text an existing report holds between its title and "## What was run" (what was run,
    the split, the findings: written by hand), so that a rerun appending rows keeps it."""
    if not md.exists():
        return ""
    text = md.read_text()
    start, end = text.find("\n\n"), text.find("## What was run")
    return text[start:end].strip() if 0 <= start < end else ""


def report(df: pd.DataFrame, preamble: str = "") -> str:
    return (
        "# Scaling study (scripts/scale_study.py)\n\n"
        + (preamble.strip() + "\n\n" if preamble else "")
        + "## What was run\n\n"
        + what_was_run(df)
        + "\n\n## Per size, budget and search (means over the runs; ± is the sd)\n\n"
        + summarise(df)
        + "\n\n## Stopping at 0.95: where each run would have stopped, read off its checkpoints\n\n"
        + stop_rules(df)
        + "\n\nTomoNav's, by lattice (early stops are those before Θ is exhausted):\n\n"
        + certificate_summary(df)
        + "\n"
    )


def _n_levels(lattice: str) -> tuple[int, int]:
    """(n, ℓ) of a lattice named ℓ^n."""
    levels, n = map(int, lattice.split("^"))
    return n, levels


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=[f"{n}x{lv}" for n, lv in SIZES], help="n x ℓ, e.g. 6x6")
    ap.add_argument("--profiles", nargs="+", default=STUDY_PROFILES)
    ap.add_argument("--searches", nargs="+", default=list(SEARCHES))
    ap.add_argument("--seeds", nargs="+", type=int, default=[100, 101, 102, 103, 104], help="table and run seeds")
    ap.add_argument("--budgets", nargs="+", type=int, default=None, help="override: these budgets at every size")
    ap.add_argument("--out", default=str(ROOT / "results/tables/scale"))
    ap.add_argument("--fresh", action="store_true", help="overwrite the csv instead of appending")
    ap.add_argument("--stop-at", type=float, default=None, help="runs really stop at this p_complete")
    ap.add_argument("--report", action="store_true", help="run nothing: rewrite <out>.md from <out>.csv")
    ap.add_argument(
        "--preamble", default=None, help="a Markdown file put at the top of <out>.md (default: keep the one it has)"
    )
    ap.add_argument(
        "--rerun",
        action="store_true",
        help="rerun --searches on exactly the tables (size in --sizes, or benchmark in --real) and budgets "
        "already in <out>.csv: its timings after a speed-up",
    )
    ap.add_argument(
        "--real",
        nargs="*",
        default=[],
        metavar="BENCHMARK:FIDELITY",
        help="also (or, with --sizes none, only) real ground truths, e.g. mnist5k_c6:ssim (computed or read from "
        "results/cache; the seeds are run seeds there)",
    )
    args = ap.parse_args(argv)
    out = Path(args.out)
    csv = out.with_suffix(".csv")
    csv.parent.mkdir(parents=True, exist_ok=True)
    preamble = Path(args.preamble).read_text() if args.preamble else kept_preamble(out.with_suffix(".md"))
    if args.report:
        out.with_suffix(".md").write_text(report(pd.read_csv(csv), preamble))
        return 0
    rows = []
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes if s != "none"]
    # (profile, seed, table, budgets or None for the study's own): real ground truths (one table,
    # the seeds are run seeds) load only when their turn comes, after the generated tables, so no
    # generated run forks from a parent holding torch and a benchmark
    if args.rerun:
        ran = pd.read_csv(csv)
        wanted = {f"{lv}^{n}" for n, lv in sizes}
        ran = ran[ran["profile"].isin(args.real) | (~ran["profile"].str.contains(":") & ran["lattice"].isin(wanted))]
        ran = ran.sort_values("profile", key=lambda p: p.str.contains(":"), kind="stable")
        tables = [
            (
                profile,
                seed,
                (lambda spec=profile: real_table(*spec.split(":")))
                if ":" in profile
                else (lambda lat=lat, p=profile, s=seed: generated(p, *_n_levels(lat), s)),
                sorted(g["budget"].unique()),
            )
            for (lat, profile, seed), g in ran.groupby(["lattice", "profile", "seed"], sort=False)
        ]
    else:
        tables = [
            (profile, seed, lambda n=n, lv=lv, p=profile, s=seed: generated(p, n, lv, s), args.budgets)
            for n, lv in sizes
            for profile in args.profiles
            for seed in args.seeds
        ]
        tables += [
            (spec, seed, lambda spec=spec: real_table(*spec.split(":")), args.budgets)
            for spec in args.real
            for seed in args.seeds
        ]
    for profile, seed, make, runs in tables:
        obj = make()
        lattice, size = f"{obj.lattice.levels}^{obj.lattice.n}", obj.lattice.size
        for budget in runs or budgets(size):
            for search in args.searches:
                r = forked(one_run, obj, search, budget, seed, args.stop_at)
                row = {"lattice": lattice, "space_size": size, "profile": profile, "seed": seed}
                row |= {"pstar_size": len(obj.pstar), "budget": budget, "search": search, **r}
                rows.append(row)
                print(
                    f"{lattice} {profile:14s} seed {seed} budget {budget:>6} {search:8s} "
                    + (
                        f"AUC {r['auc']:.3f} full {r['unique_to_full']} {r['search_ms_per_proposal']:.2f} ms/prop "
                        f"cert {100 * r['cert_share']:.0f}% stop {r['stop_unique']} {r['peak_mb']:.0f} MB"
                        if r["ok"]
                        else r["error"]
                    ),
                    flush=True,
                )
                df = pd.DataFrame(rows)
                if csv.exists() and not args.fresh:
                    df = pd.concat([pd.read_csv(csv), df]).drop_duplicates(
                        ["lattice", "profile", "seed", "budget", "search"], keep="last"
                    )
                df.to_csv(csv.with_suffix(".partial.csv"), index=False)
    df = pd.DataFrame(rows)
    if csv.exists() and not args.fresh:
        df = pd.concat([pd.read_csv(csv), df]).drop_duplicates(
            ["lattice", "profile", "seed", "budget", "search"], keep="last"
        )
    df.to_csv(csv, index=False)
    csv.with_suffix(".partial.csv").unlink(missing_ok=True)
    out.with_suffix(".md").write_text(report(df, preamble))
    print(summarise(df))
    return 0


if __name__ == "__main__":
    sys.exit(main())
