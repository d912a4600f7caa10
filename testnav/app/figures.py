"""Rebuild every figure and table from what is under results/ (`testnav figures`, `make figures`).

    testnav figures [--results results] [--seeds 10] [--no-sweep] [--no-examples] [--drop relative]
    (python -m testnav figures …, python scripts/figures.py … in a checkout: the same)

With no search runs at all under results/ (a fresh clone), it first runs the mnist5k sweep the
figures need — every search of the paper × {SSIM, KID} × the papers' 10 seeds, evolutionary
searches on the vectorised replay engine — and says so. With runs present it only draws:
figures → <results>/figures/, tables → <results>/tables/, report → <results>/report.md, and the
claims ledger → <results>/claims.md (testnav/figures/claims/).
`--results DIR` for any other folder (a run directory, a sweep of your own benchmark) draws
only what is there, beside it: no sweep, no default run, nothing under results/figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from omegaconf import OmegaConf

from .. import fidelity, searches
from ..figures.loader import load_results
from ..paths import CONF

RESULTS = Path("results")  # of the folder the command runs in, as the runs' own default
APP = [sys.executable, "-m", "testnav"]  # the runs it needs, by the same app in a fresh process

# every search some figure draws (conf/search `groups`), split by whether it takes search.engine
METHODS = searches.paper_searches()
EVOLUTIONARY = [m for m in METHODS if searches.info(m).evolutionary]  # engine=fast applies
PLAIN = [m for m in METHODS if not searches.info(m).evolutionary]
FIDELITIES = fidelity.names("image")  # every metric mnist5k computes


def sweep_commands(results: Path, seeds: int) -> list[list[str]]:
    """The minimal sweep: two Hydra multiruns (search.engine exists only for the evolutionary searches)."""
    stamp = time.strftime("%Y-%m-%d/%H-%M-%S")
    common = [
        "benchmark=mnist5k",
        f"fidelity={','.join(FIDELITIES)}",
        f"seed=range({seeds})",
        "progress=false",
        f"cache_dir={(results / 'cache').resolve()}",
    ]
    return [
        [
            *APP,
            "-m",
            f"search={','.join(EVOLUTIONARY)}",
            "search.engine=fast",
            *common,
            f"hydra.sweep.dir={(results / 'multirun' / stamp).resolve()}_figures_evolutionary",
        ],
        [
            *APP,
            "-m",
            f"search={','.join(PLAIN)}",
            *common,
            f"hydra.sweep.dir={(results / 'multirun' / stamp).resolve()}_figures_baselines",
        ],
    ]


def run_minimal_sweep(results: Path, seeds: int) -> float:
    n = len(METHODS) * len(FIDELITIES) * seeds
    labels = ", ".join(fidelity.info(f).label for f in FIDELITIES)
    print(
        f"figures: no search runs under {results}/ — running the minimal mnist5k sweep first: "
        f"{len(METHODS)} searches × {{{labels}}} × {seeds} seeds = {n} runs "
        f"(evolutionary searches with search.engine=fast; the ground truth is computed first if not cached).",
        flush=True,
    )
    t0 = time.perf_counter()
    for cmd in sweep_commands(results, seeds):
        print("  $ testnav " + " ".join(cmd[len(APP) :]), flush=True)
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            sys.stderr.write(done.stderr[-3000:])
            raise SystemExit(f"figures: the sweep failed (exit {done.returncode}); nothing drawn")
    dt = time.perf_counter() - t0
    print(f"figures: sweep done in {dt:.0f} s", flush=True)
    return dt


def default_benchmark() -> str:
    """conf/config.yaml's default benchmark: what `make run` runs."""
    defaults = OmegaConf.to_container(OmegaConf.load(CONF / "config.yaml").defaults)
    return next(d["benchmark"] for d in defaults if isinstance(d, dict) and "benchmark" in d)


DEFAULT_RUN_KEYS = (
    "benchmark",
    "fidelity",
    "search",
    "seed",
    "budget",
    "pstar_size",
    "pstar_orders",
    "auc_recall",
    "final_recall",
    "unique_to_full_recall",
    "budget_to_full_recall",
)


def default_run(results: Path, tables: Path):
    """`make run`'s numbers (the default config: mnist5k · SSIM · NSGA-II · seed 0), so the report
    states exactly what a new user sees first. A replay against the same cache: a memo hit after
    the first time. Returns the report entry, or None with a note if it could not run."""
    out = results / "default_run"  # not under runs/: the loader would count it as a sweep's run
    cmd = [
        *APP,
        "progress=false",
        f"cache_dir={(results / 'cache').resolve()}",
        f"hydra.run.dir={out.resolve()}",
    ]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        return None, f"the default run (make run) failed: {done.stderr.strip().splitlines()[-1:]}"
    s = json.loads((out / "summary.json").read_text())
    numbers = {k: s[k] for k in DEFAULT_RUN_KEYS}
    path = tables / "default_run.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(numbers, indent=2) + "\n")
    orders = ", ".join(map(str, s["pstar_orders"][1:]))
    full = (
        f"full recall after {s['unique_to_full_recall']:,} unique configurations ({s['budget_to_full_recall']:,} "
        "proposals)"
        if s["unique_to_full_recall"]
        else "full recall never reached"
    )
    sentence = (
        f"`make run` replays {s['search']} (pymoo engine, seed {s['seed']}, budget {s['budget']:,}) on "
        f"{s['benchmark']} · {s['fidelity']} and prints |P*| = {s['pstar_size']} (Θ1–Θ4: {orders}), "
        f"AUC-Recall@P* = {s['auc_recall']:.3f}, final recall {s['final_recall']:.3f}, {full}."
    )
    return sentence, None


def draw_testifai(results: Path, figures: Path, drop: str = "absolute", examples: bool = True):
    """TestifAI's figures, if that module is installed: [(path, sentence)], plus notes."""
    try:
        from testnav.figures import severity, testifai
    except ImportError:
        return [], ["TestifAI figures: testnav.figures.testifai is not available here (skipped)"]
    try:
        drawn = list(testifai.draw_all(results, figures, drop=drop))
        return drawn + (severity.draw(results, figures) if examples else []), []
    except Exception as e:  # a broken study table must not cost the TestNav figures
        return [], [f"TestifAI figures failed: {type(e).__name__}: {str(e)[:200]}"]


def protocol_entries(res, tables: Path):
    """The runs' protocol (seeds, engine) and the §3.3 grid's selection, each linked to its table."""
    from testnav.figures.build import Entry
    from testnav.figures.protocol import grid_sentence, protocol_sentence

    out = []
    said = protocol_sentence(res.runs)
    if said and (tables / "table2.csv").exists():
        out.append(Entry("Protocol", "Seeds and engines", tables / "table2.csv", said, "link"))
    grid = grid_sentence(tables)
    if grid:
        out.append(Entry("Protocol", "The §3.3 grid's selection", tables / "grid_ranking.csv", grid, "link"))
    return out


def claims_entry(res, results: Path):
    """results/claims.md (every checkable claim of both papers against these tables) and the report's line."""
    from testnav.figures.build import Entry
    from testnav.figures.claims import ALPHA, counts_sentence, write_claims

    path, claims = write_claims(res, results / "claims.md")
    sentence = (
        "The claims of TestNav and TestifAI that the tables above can check, graded by the rules claims.md "
        f"opens with (orderings significant over seeds by Welch's t-test at α = {ALPHA}, values within a "
        f"tolerance each row prints): {counts_sentence(claims)}. Each row gives the paper's number, the value "
        "measured here, the statistic or tolerance of each stated part and, where a claim does not hold, "
        "the measurement that says why."
    )
    return Entry("Claims", "The papers' claims, one by one", path, sentence, "link")


def draw_scale(results: Path, figures: Path):
    """The scaling figure, if scripts/scale_study.py's table is there: [(path, sentence)]."""
    from testnav.figures import scale

    drawn = scale.draw(results / "tables" / "scale.csv", figures / "scale.png")
    return [drawn] if drawn else []


def draw_stopping(results: Path, figures: Path):
    """The stopping figure, if scripts/stopping_study.py's table is there: [(path, sentence)]."""
    from testnav.figures import stopping

    drawn = stopping.draw(results / "tables" / "stopping_study.csv", figures / "stopping.png")
    return [drawn] if drawn else []


def main(argv=None, prog: str | None = None) -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(RESULTS), help="results folder (default: ./results)")
    ap.add_argument(
        "--seeds", type=int, default=10, help="seeds of the minimal sweep, if one is needed (default 10, the papers')"
    )
    ap.add_argument("--no-sweep", action="store_true", help="never run the minimal sweep; draw what there is")
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="with --results DIR: treat DIR as results/ (minimal sweep if it has no runs, the default "
        "run), as scripts/reproduce.py does in its scratch folder",
    )
    ap.add_argument(
        "--no-examples",
        action="store_true",
        help="skip Figs. 5–6 and TestifAI's 11 (they rebuild the benchmark's data)",
    )
    ap.add_argument(
        "--drop",
        choices=["absolute", "relative"],
        default="absolute",
        help="TestifAI Fig. 6's accuracy drop: the paper's (points against Table 1's accuracy; default) or relative",
    )
    args = ap.parse_args(argv)
    results = Path(args.results)
    own = results.resolve() != RESULTS.resolve() and not args.sweep  # a user's folder: add nothing
    t0 = time.perf_counter()
    res = load_results(results)
    if res.runs.empty and not args.no_sweep and not own:
        run_minimal_sweep(results, args.seeds)
        res = load_results(results)
    elif not res.runs.empty:
        print(f"figures: {len(res.runs)} search runs found under {results}/; drawing only (no sweep).", flush=True)

    from testnav.figures.build import Entry, draw_testnav
    from testnav.figures.reproduction import write_report

    figures, tables = results / "figures", results / "tables"
    entries = draw_testnav(res, figures, tables, examples=not args.no_examples)
    extra, notes = draw_testifai(results, figures, args.drop, examples=not args.no_examples)
    if not own and not res.runs.empty and (res.runs["benchmark"] == default_benchmark()).any():  # beside its sweep
        sentence, note = default_run(results, tables)
        if sentence:
            entries.insert(0, Entry("The default run", "make run", tables / "default_run.json", sentence, "table"))
        notes += [note] if note else []
    entries += [Entry("TestifAI figures", Path(p).stem.replace("_", " "), Path(p), s) for p, s in extra]
    entries += [Entry("Scaling", "Searches against |Θ|", p, s) for p, s in draw_scale(results, figures)]
    entries += [Entry("Stopping", "A good-enough front", p, s) for p, s in draw_stopping(results, figures)]
    entries += protocol_entries(res, tables)
    entries.append(claims_entry(res, results))
    report = write_report(entries, res, results / "report.md", extra_notes=notes)
    for e in entries:
        print(f"  {e.path}")
    print(
        f"figures: {sum(e.kind == 'figure' for e in entries)} figures, {sum(e.kind == 'table' for e in entries)} "
        f"tables, report {report} ({time.perf_counter() - t0:.0f} s in all)"
    )
    gaps = notes + res.missing
    if gaps:
        print(f"figures: {len(gaps)} gap(s), listed at the end of {report.name}:")
        for g in gaps[:12]:
            print(f"  - {g}")
        if len(gaps) > 12:
            print(f"  … {len(gaps) - 12} more")
    return 0
