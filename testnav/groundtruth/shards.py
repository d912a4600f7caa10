"""Which chunks of Θ a ground-truth shard computes, and a durable record of each run.

A ground truth is walked in chunks, one per prefix (θ1, θ2) of the first two families (36 for
6⁴), and each chunk is written atomically as it finishes. A shard is a contiguous run of
chunks, so every shard keeps the prefix sharing within it; k shards of near-equal size
(within one chunk) cost at most k − 1 extra applications of family 1, when a cut falls
inside a θ1 block (none when k divides ℓ: then the cut is exactly at the first family's
level). Cutting at (θ1, θ2) rather than at θ1 alone balances any k up to ℓ², e.g. 4 shards
of 9 chunks for 6⁴ instead of θ1 blocks of 2, 2, 1, 1.

Shards share the chunk directory of the unsharded computation: a shard that is killed,
preempted or requeued resumes at its first missing chunk, a later unsharded run reuses every
chunk the shards wrote, and whichever run finds all chunks on disk merges them into the same
table, byte for byte, as one uninterrupted run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..core.cache import write_json_atomic
from ..errors import UserError


def check_shards(shards, shard, n_chunks: int) -> tuple[int, int]:
    """Valid (shards, shard) or a one-line UserError naming the bad value and the valid ones."""
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= n_chunks:
        raise UserError(
            f"groundtruth.shards={shards}: must be a whole number from 1 to {n_chunks} "
            f"(one shard per prefix of the first two families at most)"
        )
    if isinstance(shard, bool) or not isinstance(shard, int) or not 0 <= shard < shards:
        raise UserError(f"groundtruth.shard={shard} with groundtruth.shards={shards} (valid: 0..{shards - 1})")
    return shards, shard


def shard_chunks(chunks: list, shards: int, shard: int) -> list:
    """Shard `shard` of `shards`: a contiguous run of the chunks in walk order, sizes within one."""
    check_shards(shards, shard, len(chunks))
    n = len(chunks)
    return chunks[shard * n // shards : (shard + 1) * n // shards]


class RunLog:
    """What each run of a shard did (the parts it computes, chunks reused and computed, family applications, seconds,
    SLURM job and restart count), rewritten after every chunk so that a run killed without
    warning (SIGKILL, preemption) still leaves its count behind. The merged table's .json lists
    every run, so a requeued shard shows that it resumed rather than started over."""

    def __init__(self, parts: Path, shard: int, shards: int, device: str, reused: int, computes=("objectives",)):
        self.path = Path(parts) / f"runs-{shard}-of-{shards}.json"
        self.runs = json.loads(self.path.read_text()) if self.path.exists() else []
        self.t0 = time.time()
        self.record = {
            "shard": shard,
            "shards": shards,
            "slurm_job": slurm_job(),
            "restart": int(os.environ.get("SLURM_RESTART_COUNT", 0) or 0),
            "device": device,
            "parts": list(computes),  # the table's parts this run computes (testnav/groundtruth/compute.py)
            "chunks_reused": reused,
            "chunks_computed": 0,
            "family_applications": 0,
            "seconds": 0.0,
        }
        self.runs.append(self.record)
        self.save()

    def chunk_done(self, applications: int) -> None:
        self.record["chunks_computed"] += 1
        self.record["family_applications"] = applications
        self.save()

    def save(self) -> None:
        self.record["seconds"] = round(time.time() - self.t0, 2)
        write_json_atomic(self.path, self.runs)


def slurm_job() -> str | None:
    """This job's SLURM id as squeue shows it (`123_4` for task 4 of array 123), None outside SLURM."""
    array, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
    return f"{array}_{task}" if array and task else os.environ.get("SLURM_JOB_ID")


def read_runs(parts: Path) -> list[dict]:
    """Every run record under a chunk directory, shard by shard, oldest run first."""
    files = sorted(Path(parts).glob("runs-*-of-*.json"), key=lambda p: tuple(int(x) for x in p.stem.split("-")[1::2]))
    return [run for f in files for run in json.loads(f.read_text())]
