"""Finished search runs, remembered under a key of everything they depend on.

A replay is deterministic (same table, search settings, seed and budget → same trace), so a
sweep that was killed, preempted or simply launched again does not redo the runs that had
finished: their outputs are linked into the new run directory instead. The key hashes the
table's bytes, the fidelity column, the resolved search config, seed, budget, the certificate's
settings (a run with stop_at ends where they say), output format, the early-stopping settings that price inferences, and the code that turns them into a trace:
the search's own modules and the replay pipeline, with every testnav module they import, read as
code without docstrings (`modules_digest`, the ground-truth key's mechanism). A body edit to any of
them (TomoNav's surrogate, the certificate's forest, the pool) reruns; a docstring edit does not.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from .. import searches
from ..core.cache import atomic_path, file_digest, modules_digest, object_modules, stable_hash

log = logging.getLogger(__name__)
# what turns a search's proposals into the run's files, whatever the search: the replay pipeline
# (with the certificate, trace, recall and inference costs it imports) and this module
PIPELINE = ("testnav.pipeline.runs", "testnav.app.memo")
SUMMARY = "summary.json"  # written last, so a memo with a summary is complete


def code_key(search) -> str:
    """The digest of the code a replay of `search` runs: its class's modules and the pipeline's."""
    return modules_digest(sorted(object_modules(search)) + list(PIPELINE))[0]


def run_key(cfg, table: str, budget: int, search) -> str:
    return stable_hash(
        {
            "table": file_digest(Path(table)),
            "fidelity": cfg.fidelity.name,  # the column that is ρ
            "search": searches.REGISTRY.node(cfg.search),  # its settings (not its label or figure groups)
            "seed": int(cfg.seed),
            "budget": budget,
            "certificate": dict(cfg.certificate),  # stop_at, stop_on, epsilon: where the run ends
            "format": cfg.trace_format,
            "code": code_key(search),
            # the inference costs in the trace follow TestifAI's early-stopping settings
            "stopping": {k: cfg.tomography[k] for k in ("batch", "window", "delta", "early_stopping", "seed")},
        }
    )


def memo_dir(cfg, name: str, key: str) -> Path:
    return Path(cfg.cache_dir) / "runs" / f"{name}-{key}"


def files(cfg) -> list[str]:
    return [f"trace.{cfg.trace_format}", f"ranked.{cfg.trace_format}", SUMMARY]


def restore(cfg, memo: Path, out_dir: Path) -> bool:
    """Place a finished run's outputs in out_dir; False if there is none to reuse."""
    if not cfg.reuse_runs or not (memo / SUMMARY).exists():
        return False
    for name in files(cfg):
        place(memo / name, Path(out_dir) / name)
    return True


def remember(cfg, out_dir: Path, memo: Path) -> None:
    """Keep a finished run's outputs (in out_dir) under its memo, the summary last, so a memo
    with a summary is complete."""
    if cfg.reuse_runs:
        for name in files(cfg):
            place(Path(out_dir) / name, memo / name)


def place(src: Path, dst: Path) -> None:
    """Atomically put src's bytes at dst: a hard link where the file system allows, else a copy."""
    with atomic_path(dst) as tmp:
        tmp.unlink()
        try:
            os.link(src, tmp)
        except OSError:
            shutil.copy2(src, tmp)
