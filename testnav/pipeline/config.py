"""The packaged run config, composed outside any Hydra app (Tester, tests, scripts), and what a
composed config builds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from .. import benchmarks
from ..core.progress import resolve
from ..core.table import Objectives
from ..errors import UserError
from ..fidelity import sign as rho_sign
from ..groundtruth.compute import complete, read_meta, table_path, whole_table
from ..groundtruth.session import resolve_device

if TYPE_CHECKING:
    from ..benchmarks.base import Benchmark
from ..paths import CONF
from ..registry import compose


def compose_config(overrides=()):
    """conf/config.yaml with Hydra overrides (e.g. ["benchmark=mnist5k", "fidelity=kid"])."""
    return compose(CONF, "config", overrides)


def compose_benchmark(overrides=()):
    """A benchmark built from conf/ with Hydra overrides (tests, scripts, golden checks)."""
    return benchmarks.make(compose_config(overrides).benchmark)


def build_groundtruth(cfg, signals: bool = True) -> tuple[Path, Benchmark]:
    """The path of `cfg`'s benchmark's ground truth (computed or resumed if absent), and the benchmark;
    `signals=False` when the run reads no signal column (the signals part is then not computed)."""
    benchmark = benchmarks.make(cfg.benchmark)
    path = whole_table(
        benchmark, cfg.cache_dir, resolve_device(cfg.device), progress=resolve(cfg.progress), signals=signals
    )
    return path, benchmark


def groundtruth_objectives(path: Path, benchmark, fidelity: str, signals=()) -> tuple[Objectives, dict]:
    """Normalised (δ, ρ) from a benchmark's ground-truth table, and what identifies them."""
    df = pd.read_parquet(path)
    if fidelity not in df.columns:
        raise UserError(
            f"fidelity={fidelity}: benchmark {benchmark.name} has no '{fidelity}' "
            f"column (valid for it: {', '.join(benchmark.metrics)})"
        )
    obj = Objectives.from_table(
        df,
        fidelity,
        rho_sign(fidelity, benchmark.metrics),
        source=f"benchmark={benchmark.name}",
        signals=signals,
    )
    return obj, {
        "benchmark": benchmark.name,
        "fidelity": fidelity,
        "table": str(Path(path).resolve()),  # absolute: the summary names its table from any folder
        "psi_clean": read_meta(path).get("psi_clean"),
    }


def cached_groundtruth(benchmark, cache_dir, loaded) -> Path | None:
    """The benchmark's ground-truth table if it is complete on disk already (never computed here)."""
    path = table_path(cache_dir, benchmark, benchmark.key(loaded))
    return path if complete(path) else None
