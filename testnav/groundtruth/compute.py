"""Exhaustive evaluation of Θ: the ground-truth table every replay and figure reads.

Configurations are walked in lattice order, so T1 → T1T2 → T1T2T3 → … is computed once
per prefix and reused by every configuration that shares it (1,295 family applications
for 6⁴, instead of 5,184 naive). The walk is cut into chunks (one per prefix of the first
two families) that are written atomically as they finish, so a killed run resumes at the
first missing chunk; a file lock makes concurrent callers wait and reuse the result. The same
chunks are the unit of sharding across jobs (testnav/groundtruth/shards.py): a shard computes a contiguous
run of them and the run that finds all of them on disk merges the table.

Randomness is tied to the prefix, not to the walk: family i at a node draws from a
generator seeded by (perturb_seed, θ1..θi), so a prefix gives the same images however
(and in whichever process) it is reached.
"""

from __future__ import annotations

import json
import logging
import shutil
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path, checksum_path, file_lock, verified, write_json_atomic
from ..core.progress import bar
from .session import open as open_session
from .shards import RunLog, read_runs, shard_chunks
from .walk import PrefixWalker, sibling_groups

log = logging.getLogger(__name__)


def rows_for(benchmark, loaded, walker: PrefixWalker, thetas, psi_clean: float, pbar, stack: int = 1) -> pd.DataFrame:
    """One table row per θ; `stack` sibling sets scored in one call (`Benchmark.score_sets`)."""
    rows = []
    for group in sibling_groups(thetas, stack):
        images = [walker.images(theta) for theta in group]
        for theta, s in zip(group, benchmark.score_sets(loaded, images, group)):
            row = {f"t{i + 1}": int(t) for i, t in enumerate(theta)}
            row["psi"] = s.pop("psi")
            row["delta"] = max(psi_clean - row["psi"], 0.0)
            correct = s.pop("correct")
            row.update(s)
            row["correct"] = correct.tolist()
            rows.append(row)
        pbar.update(len(group))
    return pd.DataFrame(rows)


def table_path(cache_dir, benchmark, key: str) -> Path:
    return Path(cache_dir) / "groundtruth" / f"{benchmark.name}-{key}.parquet"


def chunk_prefixes(lattice) -> list[tuple[int, ...]]:
    """The unit of resumption and of sharding: one prefix of the first two families, in walk order."""
    return list(product(range(lattice.levels), repeat=min(2, lattice.n - 1)))


def compute_groundtruth(
    benchmark, cache_dir, device: str = "cpu", progress: bool = True, shards: int = 1, shard: int = 0
) -> Path | None:
    """Return the path of the benchmark's ground-truth table, computing what is missing.

    With shards=k > 1, only shard `shard`'s chunks are computed (testnav/groundtruth/shards.py says which,
    and why the cut keeps prefix sharing); the run that finds every chunk on disk merges them
    and returns the table, a shard that finishes before the others returns None.
    """
    chunks = chunk_prefixes(benchmark.lattice)
    mine = shard_chunks(chunks, shards, shard)  # checked before the model is loaded
    session = open_session(benchmark, cache_dir, device)
    key = benchmark.key(session.loaded)
    final = table_path(cache_dir, benchmark, key)
    if complete(final):
        return final
    parts = final.with_suffix(".parts")
    table_lock = final.with_suffix(".lock")
    # one lock per shard: shards run side by side, a duplicate of the same shard waits and reuses
    own_lock = table_lock if shards == 1 else parts / f"shard-{shard}-of-{shards}.lock"
    with file_lock(own_lock):
        if complete(final):  # another process finished it while we waited
            return final
        evaluate_chunks(session, final, mine, (shard, shards), progress)
        if shards == 1:
            return merge(session, key, final, chunks)
    missing = [c for c in chunks if not verified(parts / chunk_name(c))]
    if missing and not final.exists():
        log.info(
            "ground truth %s shard %d/%d done; %d chunks of other shards still missing",
            benchmark.name,
            shard,
            shards,
            len(missing),
        )
        return None
    with file_lock(table_lock):
        if complete(final):
            return final
        return merge(session, key, final, chunks)


def evaluate_chunks(session, final: Path, chunks, shard: tuple[int, int], progress: bool) -> None:
    """Write every missing chunk of `chunks` atomically."""
    benchmark = session.benchmark
    parts = final.with_suffix(".parts")
    parts.mkdir(parents=True, exist_ok=True)
    done = sum(verified(parts / chunk_name(c)) for c in chunks)
    record = RunLog(parts, *shard, session.device, reused=done)
    lattice = benchmark.lattice
    rest = list(product(range(lattice.levels), repeat=lattice.n - len(chunks[0])))
    psi_clean, walker, stack = session.psi_clean, session.walker, session.stack
    record.record["stacked"] = min(stack, lattice.levels)  # sibling sets scored per call
    label = f"ground truth {benchmark.name}" + (f" shard {shard[0]}/{shard[1]}" if shard[1] > 1 else "")
    with bar(
        total=len(chunks) * len(rest), initial=done * len(rest), desc=label, unit="cfg", progress=progress
    ) as pbar:
        for chunk in chunks:
            path = parts / chunk_name(chunk)
            if verified(path):  # finished before (a corrupted one is reported and redone)
                continue
            if final.exists():  # an unsharded run merged everything meanwhile
                break
            df = rows_for(benchmark, session.loaded, walker, [chunk + r for r in rest], psi_clean, pbar, stack)
            with atomic_path(path, checksum=True) as tmp:
                df.to_parquet(tmp, index=False)
            record.chunk_done(walker.applications)


def merge(session, key: str, final: Path, chunks) -> Path:
    """Concatenate the chunks in walk order into the table (caller holds the table's lock)."""
    benchmark, loaded, clean = session.benchmark, session.loaded, session.clean
    parts = final.with_suffix(".parts")
    lattice = benchmark.lattice
    table = pd.concat([pd.read_parquet(parts / chunk_name(c)) for c in chunks], ignore_index=True)
    runs = read_runs(parts)
    applications = sum(r["family_applications"] for r in runs)
    meta = {
        "benchmark": benchmark.name,
        "key": key,
        "psi_clean": clean["psi"],
        "n_inputs": len(loaded.labels),
        "families": [f.describe() for f in benchmark.families],
        "task": benchmark.task_description(),  # the readings behind the numbers, for the report
        "metric_settings": {k: m.describe() for k, m in benchmark.metrics.items()},
        "levels": lattice.levels,
        "metrics_clean": {k: v for k, v in clean.items() if k not in ("psi", "correct")},
        "family_applications": applications,
        "naive_applications": lattice.size * lattice.n,
        "seconds": round(sum(r["seconds"] for r in runs), 2),
        "device": session.device,
        "runs": runs,
    }
    write_json_atomic(final.with_suffix(".json"), meta, checksum=True)  # first: a table never lacks its meta
    with atomic_path(final, checksum=True) as tmp:
        table.to_parquet(tmp, index=False)
    shutil.rmtree(parts, ignore_errors=True)
    log.info(
        "ground truth %s: %d configurations in %.1f s over %d run(s), %d family applications (naive %d)",
        benchmark.name,
        lattice.size,
        meta["seconds"],
        len(runs),
        applications,
        meta["naive_applications"],
    )
    return final


def complete(final: Path) -> bool:
    """The table and its metadata are both on disk and intact. If either is missing or corrupted
    the table is removed too, so the run recomputes both instead of trusting half a product."""
    if verified(final.with_suffix(".json")) and verified(final):
        return True
    final.unlink(missing_ok=True)
    checksum_path(final).unlink(missing_ok=True)
    return False


def chunk_name(chunk: tuple[int, ...]) -> str:
    return "chunk-" + "-".join(map(str, chunk)) + ".parquet"


def read_meta(table: Path) -> dict:
    p = Path(table).with_suffix(".json")
    return json.loads(p.read_text()) if p.exists() else {}


def outcomes(table: pd.DataFrame) -> np.ndarray:
    """Per-input correctness as an (|Θ|, N) bool array, rows in table order (TestifAI's input)."""
    return np.stack(table["correct"].to_numpy()).astype(bool)
