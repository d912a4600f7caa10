"""Stage dispatch behind run.py: a newcomer can follow a run from here to summary.json.

    stage=groundtruth → compute_groundtruth(benchmark)             → results/cache/groundtruth/*.parquet
    stage=search      → Objectives (table) → Search.run(Oracle)    → trace.csv + summary.json
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig

from .cache import atomic_path, write_json_atomic
from .errors import UserError
from .groundtruth import compute_groundtruth, read_meta
from .oracle import TableOracle
from .table import Objectives, read_table
from .trace import make_trace, summarize

log = logging.getLogger(__name__)
STAGES = ("search", "groundtruth")


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name not in ("cpu", "cuda") and not name.startswith("cuda:"):
        raise UserError(f"device={name} (valid: auto, cpu, cuda, cuda:N)")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device={name} but no CUDA device is available (use device=cpu or device=auto)")
    return name


def build(node: DictConfig):
    """instantiate() from YAML, surfacing our UserError instead of Hydra's wrapped, multi-line one."""
    try:
        return instantiate(node, _convert_="all")
    except Exception as e:
        cause = e
        while cause is not None and not isinstance(cause, UserError):
            cause = cause.__cause__ or cause.__context__
        if cause is not None:
            raise cause from None
        raise


def build_groundtruth(cfg: DictConfig) -> tuple[Path, object]:
    benchmark = build(cfg.benchmark)
    path = compute_groundtruth(benchmark, cfg.cache_dir, resolve_device(cfg.device), progress=cfg.progress)
    return path, benchmark


def load_objectives(cfg: DictConfig) -> tuple[Objectives, dict]:
    """(δ, ρ) over Θ for this run, from an external table or the benchmark's ground truth."""
    if cfg.groundtruth.table:
        df = read_table(cfg.groundtruth.table)
        obj = Objectives.from_table(df, "rho", 1.0, source=f"groundtruth.table={cfg.groundtruth.table}")
        return obj, {"benchmark": Path(cfg.groundtruth.table).stem, "fidelity": "rho", "table": str(cfg.groundtruth.table)}
    path, benchmark = build_groundtruth(cfg)
    df = pd.read_parquet(path)
    if cfg.fidelity.column not in df.columns:
        metrics = [c for c in df.columns if c in benchmark.metrics]
        raise UserError(f"fidelity={cfg.fidelity.name}: benchmark {benchmark.name} has no '{cfg.fidelity.column}' "
                        f"column (valid for it: {', '.join(metrics)})")
    obj = Objectives.from_table(df, cfg.fidelity.column, float(cfg.fidelity.sign), source=str(path))
    return obj, {"benchmark": benchmark.name, "fidelity": cfg.fidelity.name, "table": str(path),
                 "psi_clean": read_meta(path).get("psi_clean")}


def check_budget(budget, space_size: int | None = None) -> int | None:
    """The proposal budget B; null means the paper's 5 × |Θ|. Checked before any work starts."""
    if budget is None:
        return None if space_size is None else 5 * space_size
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget != int(budget) or budget <= 0:
        raise UserError(f"budget={budget}: must be a positive whole number of proposals (or null for 5 × |Θ|)")
    return int(budget)


def run_search(cfg: DictConfig, out_dir: Path) -> dict:
    obj, identity = load_objectives(cfg)
    budget = check_budget(cfg.budget, obj.lattice.size)
    search = build(cfg.search)
    t0 = time.perf_counter()
    proposals = search.run(TableOracle(obj), budget, int(cfg.seed))
    seconds = time.perf_counter() - t0
    trace = make_trace(proposals, obj)
    summary = summarize(trace, obj, proposals, **identity, search=search.name, seed=int(cfg.seed), budget=budget)
    summary["search_seconds"] = round(seconds, 4)
    trace_path = out_dir / f"trace.{cfg.trace_format}"
    with atomic_path(trace_path) as tmp:
        trace.to_parquet(tmp, index=False) if cfg.trace_format == "parquet" else trace.to_csv(tmp, index=False)
    write_json_atomic(out_dir / "summary.json", summary)
    print(human_summary(summary, out_dir, trace_path.name))
    return summary


def human_summary(s: dict, out_dir: Path, trace_name: str) -> str:
    orders = ", ".join(f"Θ{k}: {c}" for k, c in enumerate(s["pstar_orders"]) if k > 0)
    full = (f"full recall after {s['unique_to_full_recall']:,} unique configurations ({s['budget_to_full_recall']:,} proposals)"
            if s["unique_to_full_recall"] else "full recall never reached")
    return "\n".join([
        f"TestNav · {s['benchmark']} · {s['fidelity']} · {s['search']} · seed {s['seed']} · budget {s['budget']:,}",
        f"  |P*| = {s['pstar_size']}  ({orders})",
        f"  AUC-Recall@P* = {s['auc_recall']:.3f}   final recall = {s['final_recall']:.3f}   {full}",
        f"  unique configurations seen: {s['unique']:,} of {s['space_size']:,}",
        f"  run directory: {out_dir}  (summary.json, {trace_name})",
    ])


def main(cfg: DictConfig, out_dir: Path) -> dict | None:
    if cfg.stage not in STAGES:
        raise UserError(f"stage={cfg.stage} (valid: {', '.join(STAGES)})")
    check_budget(cfg.budget)
    if cfg.trace_format not in ("csv", "parquet"):
        raise UserError(f"trace_format={cfg.trace_format} (valid: csv, parquet)")
    if cfg.stage == "groundtruth":
        if cfg.groundtruth.table:
            raise UserError("stage=groundtruth computes a benchmark's table; drop groundtruth.table=… to use it")
        path, _ = build_groundtruth(cfg)
        meta = read_meta(path)
        print(f"ground truth {meta.get('benchmark')}: {path}\n  clean ψ = {meta.get('psi_clean')}, "
              f"family applications {meta.get('family_applications')} (naive {meta.get('naive_applications')})")
        return None
    return run_search(cfg, out_dir)
