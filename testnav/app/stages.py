"""Stage dispatch behind run.py: a newcomer can follow a run from here to summary.json.

stage=groundtruth → compute_groundtruth(benchmark)          → results/cache/groundtruth/*.parquet
                    (groundtruth.shards=k, groundtruth.shard=i: one of k jobs; the last one merges)
stage=search      → Objectives (table) → Search.run(Oracle) → trace, ranked list, summary.json
stage=live        → LiveOracle (the model, memoised) → Search.run(Oracle) → same outputs, no P*
stage=grid        → NSGA-II hyperparameter grid (§3.3)     → results/tables/grid*.csv, grid_selection.json
stage=tomography | query | study → TestifAI (testnav/tomography/stage.py)
stage=check       → load every artifact, clean ψ(D) against the paper, throughput (testnav/app/check.py)
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import DictConfig, OmegaConf

from ..pipeline import build, build_groundtruth, resolve_device
from ..core.cache import atomic_path, write_json_atomic
from ..stopping.certificate import Certificate, CertifiedOracle, run_certified, summary_fields
from ..errors import UserError
from ..fidelity import sign as rho_sign
from ..groundtruth.compute import compute_groundtruth, read_meta
from ..groundtruth.inferences import FULL_D, inference_summary, table_costs
from .memo import memo_dir, restore, run_key
from ..core.oracle import TableOracle
from ..paths import CONF
from ..searches import Search
from ..core.table import Objectives, read_table
from ..core.trace import make_trace, ranked_list, summarize

log = logging.getLogger(__name__)


def build_search(cfg: DictConfig):
    """The search and its search.stop_at (the stopping certificate's threshold, not the search's)."""
    node = OmegaConf.to_container(cfg.search, resolve=True)
    stop_at = node.pop("stop_at", None)
    return build(OmegaConf.create(node)), stop_at


def load_objectives(cfg: DictConfig, fidelity: DictConfig, signals=()) -> tuple[Objectives, dict]:
    """Normalised (δ, ρ) over Θ (plus any extra signals), from an external table or the benchmark's ground truth."""
    if cfg.groundtruth.table:
        df = read_table(cfg.groundtruth.table)
        obj = Objectives.from_table(
            df, "rho", 1.0, source=f"groundtruth.table={cfg.groundtruth.table}", signals=signals
        )
        return obj, {
            "benchmark": Path(cfg.groundtruth.table).stem,
            "fidelity": "rho",
            "table": str(cfg.groundtruth.table),
        }
    path, benchmark = build_groundtruth(cfg)
    return groundtruth_objectives(path, benchmark, fidelity, signals)


def groundtruth_objectives(path: Path, benchmark, fidelity, signals=()) -> tuple[Objectives, dict]:
    """Normalised (δ, ρ) from a benchmark's ground-truth table, and what identifies them."""
    df = pd.read_parquet(path)
    if fidelity.column not in df.columns:
        raise UserError(
            f"fidelity={fidelity.name}: benchmark {benchmark.name} has no '{fidelity.column}' "
            f"column (valid for it: {', '.join(benchmark.metrics)})"
        )
    obj = Objectives.from_table(
        df,
        fidelity.column,
        rho_sign(fidelity.column, benchmark.metrics),
        source=f"benchmark={benchmark.name}",
        signals=signals,
    )
    return obj, {
        "benchmark": benchmark.name,
        "fidelity": fidelity.name,
        "table": str(path),
        "psi_clean": read_meta(path).get("psi_clean"),
    }


def stopping_rule(cfg: DictConfig):
    """TestifAI's early-stopping rule and its seed (tomography.*), which price every configuration in inferences."""
    from ..tomography.core import Settings

    settings = Settings.from_config(cfg)
    return settings.rule, settings.seed


def check_budget(budget, space_size: int | None = None) -> int | None:
    """The proposal budget B; null means the paper's 5 × |Θ|. Checked before any work starts."""
    if budget is None:
        return None if space_size is None else 5 * space_size
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget != int(budget) or budget <= 0:
        raise UserError(f"budget={budget}: must be a positive whole number of proposals (or null for 5 × |Θ|)")
    return int(budget)


def check_seed(seed) -> int:
    """The run's seed: a whole number (it seeds the search and names the run)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise UserError(f"seed={seed}: must be a whole number (e.g. seed=0, or -m seed='range(10)')")
    return seed


def write_outputs(cfg, out_dir: Path, trace: pd.DataFrame, ranked: pd.DataFrame, summary: dict) -> Path:
    trace_path = out_dir / f"trace.{cfg.trace_format}"
    for df, path in ((trace, trace_path), (ranked, out_dir / f"ranked.{cfg.trace_format}")):
        with atomic_path(path) as tmp:
            df.to_parquet(tmp, index=False) if cfg.trace_format == "parquet" else df.to_csv(tmp, index=False)
    write_json_atomic(out_dir / "summary.json", summary)
    return trace_path


def fit_population(cfg: DictConfig, search: Search, lattice, budget: int) -> None:
    """The default population, shrunk to fit a small lattice (or budget) with a note; a population
    the user set on the command line is kept, and an impossible one is still refused."""
    try:
        from hydra.core.hydra_config import HydraConfig

        given = HydraConfig.initialized() and any(
            o.lstrip("+~").startswith("search.pop_size=") for o in HydraConfig.get().overrides.task
        )
    except ValueError:
        given = False
    if not given:
        search.fit(lattice, budget)


def certified_run(
    search: Search, stop_at, oracle, pstar, costs, unit: str, identity: dict, budget: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The one search pipeline, replay and live alike: `search` against `oracle` under the stopping
    certificate, then its trace, ranked list and summary (P* and Recall@P* where `pstar` is known)."""
    lattice = oracle.lattice
    certified = CertifiedOracle(oracle, Certificate(lattice, stop_at=stop_at, seed=seed))
    t0 = time.perf_counter()
    proposals, p_complete = run_certified(search, certified, budget, seed, oracle.evaluate)
    seconds = time.perf_counter() - t0
    trace = make_trace(proposals, lattice, oracle.evaluate(proposals), pstar, costs)
    trace["p_complete"] = p_complete
    summary = summarize(trace, lattice, pstar, proposals, **identity, search=search.name, seed=seed, budget=budget)
    summary.update(inference_summary(trace, lattice, pstar, costs, unit))
    summary.update(summary_fields(certified.certificate, p_complete))
    summary["search_seconds"] = round(seconds, 4)
    return trace, ranked_list(trace, lattice.n), summary


def replay_run(
    search: Search, stop_at, obj: Objectives, identity: dict, budget: int, seed: int, stopping, stopping_seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """One search against a ground-truth table: (trace, ranked list, summary), nothing written."""
    costs, unit = table_costs(identity["table"], obj.lattice, stopping, stopping_seed)
    return certified_run(search, stop_at, TableOracle(obj), obj.pstar, costs, unit, identity, budget, seed)


def live_run(
    search: Search, stop_at, benchmark, fidelity, budget: int, seed: int, cache_dir, device: str, live=None
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """One search against the model itself (no table): (trace, ranked list, summary), nothing
    written. `fidelity` has name, column and sign (a conf/fidelity node); `live` reuses a
    LiveOracle (and its memo) from an earlier run on the same benchmark and fidelity."""
    from ..groundtruth.live import LiveOracle

    if search.replay_only:
        raise UserError(f"search={search.name} replays a ground-truth table; a live search needs {search.live_fix}")
    search.check(benchmark.lattice, budget)  # population vs |Θ| and budget, before the model is loaded
    t0 = time.perf_counter()
    if live is None:
        live = LiveOracle(benchmark, cache_dir, device, fidelity.column, rho_sign(fidelity.column, benchmark.metrics))
    done = live.evaluations
    costs = np.full(benchmark.lattice.size, len(live.loaded.labels), dtype=np.int64)  # live: all of D per θ
    identity = {"benchmark": benchmark.name, "fidelity": fidelity.name}
    trace, ranked, summary = certified_run(search, stop_at, live, None, costs, FULL_D, identity, budget, seed)
    summary.update(
        live=True,
        evaluations=live.evaluations - done,
        psi_clean=live.psi_clean,
        evaluation_seconds=round(live.seconds, 2),
        wall_seconds=round(time.perf_counter() - t0, 2),
    )
    return trace, ranked, summary


def run_search(cfg: DictConfig, out_dir: Path) -> dict:
    search, stop_at = build_search(cfg)
    obj, identity = load_objectives(cfg, cfg.fidelity, signals=search.requires)
    budget = check_budget(cfg.budget, obj.lattice.size)
    memo = memo_dir(cfg, search.name, run_key(cfg, identity["table"], budget, search))
    if restore(cfg, memo, out_dir):  # this exact run finished before (an interrupted or repeated sweep)
        summary = json.loads((out_dir / "summary.json").read_text())
        print(human_summary(summary, out_dir, f"trace.{cfg.trace_format}") + f"\n  (reused the finished run {memo})")
        return summary
    fit_population(cfg, search, obj.lattice, budget)
    trace, ranked, summary = replay_run(search, stop_at, obj, identity, budget, int(cfg.seed), *stopping_rule(cfg))
    # into the memo first, then linked into the run directory: a run directory with a summary
    # always has a memo behind it, so a killed sweep's finished runs are never redone
    path = write_outputs(cfg, memo if cfg.reuse_runs else out_dir, trace, ranked, summary)
    restore(cfg, memo, out_dir)
    print(human_summary(summary, out_dir, path.name))
    return summary


def run_live(cfg: DictConfig, out_dir: Path) -> dict:
    search, stop_at = build_search(cfg)
    benchmark = build(cfg.benchmark)
    budget = check_budget(cfg.budget, benchmark.lattice.size)
    fit_population(cfg, search, benchmark.lattice, budget)
    trace, ranked, summary = live_run(
        search, stop_at, benchmark, cfg.fidelity, budget, int(cfg.seed), cfg.cache_dir, resolve_device(cfg.device)
    )
    path = write_outputs(cfg, out_dir, trace, ranked, summary)
    top = ranked.head(5)
    lines = [
        f"live {search.name} on {benchmark.name} · {cfg.fidelity.name} · seed {cfg.seed}: "
        f"{summary['evaluations']} configurations evaluated for {budget} proposals in {summary['wall_seconds']} s",
        "  first of the ranked list R (Pareto rank, then crowding distance):",
    ]
    lines += [
        f"    θ={tuple(int(r[f't{i + 1}']) for i in range(benchmark.lattice.n))}  δ={r.delta:.3f}  ρ={r.rho:.3f}  "
        f"rank {int(r['rank'])}"
        for _, r in top.iterrows()
    ]
    lines.append(f"  run directory: {out_dir}  (summary.json, {path.name}, ranked.{cfg.trace_format})")
    print("\n".join(lines))
    return summary


def run_grid_stage(cfg: DictConfig, out_dir: Path) -> dict:
    from hydra import compose

    from .grid import check_grid, run_grid

    check_grid(cfg.grid)
    tables = []
    for spec in cfg.grid.tables:
        spec = str(spec)
        if Path(spec).suffix.lower() in (".csv", ".parquet", ".pq"):
            obj = Objectives.from_table(read_table(spec), "rho", 1.0, source=spec)
            tables.append((Path(spec).stem, obj))
            continue
        fidelity_dir = CONF / "fidelity"
        if not (fidelity_dir / f"{spec}.yaml").exists():
            valid = sorted(p.stem for p in fidelity_dir.glob("*.yaml"))
            raise UserError(
                f"grid.tables entry '{spec}' is neither a table file nor a fidelity (valid: {', '.join(valid)})"
            )
        fidelity = compose(config_name="config", overrides=[f"fidelity={spec}"]).fidelity
        obj, identity = load_objectives(cfg, fidelity)
        tables.append((f"{identity['benchmark']}_{spec}", obj))
    summary = run_grid(cfg, tables, out_dir, lambda obj: check_budget(cfg.budget, obj.lattice.size))
    best = summary["selected"]
    print(
        f"grid ({summary['engine']}): {summary['runs']} runs over {', '.join(summary['tables'])}\n"
        f"  selected η_c={best['eta_c']:g}, η_m={best['eta_m']:g}, μ={best['pop_size']}: reaches Recall ≥ "
        f"{summary['threshold']} on {best['reached']}/{best['tables']} tables, worst-case recall "
        f"{best['worst_recall']:.3f}, mean AUC {best['mean_auc']:.3f}\n"
        f"  wall time per table (s): {summary['wall_seconds']}\n  tables in {cfg.grid.out}"
    )
    write_json_atomic(out_dir / "summary.json", summary)
    return summary


def run_groundtruth(cfg: DictConfig, out_dir: Path) -> None:
    """The whole table, or one shard of it (a job of a sharded sweep); the last shard merges."""
    if cfg.groundtruth.table:
        raise UserError("stage=groundtruth computes a benchmark's table; drop groundtruth.table=… to use it")
    shards, shard = cfg.groundtruth.shards, cfg.groundtruth.shard
    benchmark = build(cfg.benchmark)
    path = compute_groundtruth(
        benchmark, cfg.cache_dir, resolve_device(cfg.device), progress=cfg.progress, shards=shards, shard=shard
    )
    if path is None:
        print(
            f"ground truth {benchmark.name}: shard {shard} of {shards} written; the last shard to finish "
            f"merges the table (or a run of stage=groundtruth without shards merges and fills any gap)"
        )
        return None
    meta = read_meta(path)
    print(
        f"ground truth {meta.get('benchmark')}: {path}\n  clean ψ = {meta.get('psi_clean')}, "
        f"family applications {meta.get('family_applications')} (naive {meta.get('naive_applications')})"
    )
    return None


def human_summary(s: dict, out_dir: Path, trace_name: str) -> str:
    orders = ", ".join(f"Θ{k}: {c}" for k, c in enumerate(s["pstar_orders"]) if k > 0)
    full = (
        f"full recall after {s['unique_to_full_recall']:,} unique configurations ({s['budget_to_full_recall']:,} proposals)"
        if s["unique_to_full_recall"]
        else "full recall never reached"
    )
    return "\n".join(
        [
            f"TestNav · {s['benchmark']} · {s['fidelity']} · {s['search']} · seed {s['seed']} · budget {s['budget']:,}",
            f"  |P*| = {s['pstar_size']}  ({orders})",
            f"  AUC-Recall@P* = {s['auc_recall']:.3f}   final recall = {s['final_recall']:.3f}   {full}",
            f"  unique configurations seen: {s['unique']:,} of {s['space_size']:,}",
            f"  run directory: {out_dir}  (summary.json, {trace_name}, ranked list)",
        ]
    )


def _tomography_stage(name: str):
    def run(cfg: DictConfig, out_dir: Path):
        from ..tomography import stage

        return getattr(stage, f"run_{name}")(cfg, out_dir)

    return run


def run_check_stage(cfg: DictConfig, out_dir: Path) -> dict:
    from .check import run_check

    return run_check(cfg, out_dir)


# stage=… → its runner(cfg, out_dir); TestifAI's and the pre-flight check import their code on use
STAGES = {
    "search": run_search,
    "groundtruth": run_groundtruth,
    "live": run_live,
    "grid": run_grid_stage,
    "tomography": _tomography_stage("tomography"),
    "query": _tomography_stage("query"),
    "study": _tomography_stage("study"),
    "check": run_check_stage,
}


def main(cfg: DictConfig, out_dir: Path) -> dict | None:
    if cfg.stage not in STAGES:
        raise UserError(f"stage={cfg.stage} (valid: {', '.join(STAGES)})")
    check_budget(cfg.budget)
    check_seed(cfg.seed)
    if cfg.trace_format not in ("csv", "parquet"):
        raise UserError(f"trace_format={cfg.trace_format} (valid: csv, parquet)")
    return STAGES[cfg.stage](cfg, out_dir)
