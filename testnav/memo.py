"""Finished search runs, remembered under a key of everything they depend on.

A replay is deterministic (same table, search settings, seed and budget → same trace), so a
sweep that was killed, preempted or simply launched again does not redo the runs that had
finished: their outputs are linked into the new run directory instead. The key hashes the
table's bytes, the fidelity column, the resolved search config, seed, budget, output format,
the early-stopping settings that price inferences, and the source of the code that turns them into a trace, so any change to any of them reruns.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from omegaconf import OmegaConf

from .cache import atomic_path, file_digest, source_hash, stable_hash

log = logging.getLogger(__name__)
CODE = (
    "searches",
    "trace.py",
    "recall.py",
    "pareto.py",
    "table.py",
    "oracle.py",
    "lattice.py",
    "inferences.py",
    "tomography/executor.py",
    "memo.py",
    "certificate.py",
)
SUMMARY = "summary.json"  # written last, so a memo with a summary is complete


def run_key(cfg, table: str, budget: int) -> str:
    return stable_hash(
        {
            "table": file_digest(Path(table)),
            "fidelity": OmegaConf.to_container(cfg.fidelity, resolve=True),
            "search": OmegaConf.to_container(cfg.search, resolve=True),
            "seed": int(cfg.seed),
            "budget": budget,
            "format": cfg.trace_format,
            "code": source_hash(*CODE),
            # the inference costs in the trace follow TestifAI's early-stopping settings
            "stopping": {k: cfg.tomography[k] for k in ("batch", "window", "delta", "early_stopping", "seed")},
        }
    )


def memo_dir(cfg, name: str, key: str) -> Path:
    return Path(cfg.cache_dir) / "runs" / f"{name}-{key}"


def files(cfg) -> list[str]:
    return [f"trace.{cfg.trace_format}", f"ranked.{cfg.trace_format}", SUMMARY]


def recall(cfg, memo: Path, out_dir: Path) -> bool:
    """Place a finished run's outputs in out_dir; False if there is none to reuse."""
    if not cfg.reuse_runs or not (memo / SUMMARY).exists():
        return False
    for name in files(cfg):
        place(memo / name, Path(out_dir) / name)
    return True


def place(src: Path, dst: Path) -> None:
    """Atomically put src's bytes at dst: a hard link where the file system allows, else a copy."""
    with atomic_path(dst) as tmp:
        tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copy2(src, tmp)
