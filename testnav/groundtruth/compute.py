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
import torch
from tqdm import tqdm

from ..core.memory import keep_freed_memory
from ..core.cache import atomic_path, checksum_path, file_lock, stable_hash, verified, write_json_atomic
from .shards import RunLog, read_runs, shard_chunks

log = logging.getLogger(__name__)


def prefix_generator(seed: int, prefix: tuple[int, ...], batch: int | None = None) -> torch.Generator:
    """The generator of the last family of `prefix`; `batch` seeds one batch of D on its own
    (the live tomography executor perturbs D batch by batch)."""
    payload = {"seed": seed, "prefix": list(prefix)}
    if batch is not None:
        payload["batch"] = batch
    return torch.Generator().manual_seed(int(stable_hash(payload, 15), 16))


class PrefixWalker:
    """Applies families along prefixes, keeping the current path's images on a stack."""

    def __init__(self, families, inputs: torch.Tensor, seed: int):
        self.families, self.seed = families, seed
        self.stack: list[tuple[tuple[int, ...], torch.Tensor]] = [((), inputs)]
        self.applications = 0  # non-identity family applications performed

    def images(self, theta: tuple[int, ...]) -> torch.Tensor:
        depth = 0
        while depth + 1 < len(self.stack) and self.stack[depth + 1][0] == theta[: depth + 1]:
            depth += 1
        del self.stack[depth + 1 :]
        x = self.stack[-1][1]
        for i in range(depth, len(theta)):
            prefix = theta[: i + 1]
            if theta[i] > 0:
                x = self.families[i](x, theta[i], prefix_generator(self.seed, prefix))
                self.applications += 1
            self.stack.append((prefix, x))
        return x


STACK_BYTES = {"cpu": 1 << 26, "cuda": 1 << 30}  # images of sibling sets scored together (per call)


def stack_size(inputs, device: str) -> int:
    """How many perturbed sets of D fit in one scoring call (testnav/core/sets.py): all ℓ siblings of a
    prefix for small images, one set at a time when D alone is that large."""
    if not isinstance(inputs, torch.Tensor) or inputs.numel() == 0:
        return 1
    return max(1, STACK_BYTES["cuda" if str(device).startswith("cuda") else "cpu"] // (inputs.numel() * 4))


def sibling_groups(thetas, size: int):
    """Consecutive configurations that differ only in the last family, at most `size` at a time."""
    group: list[tuple[int, ...]] = []
    for theta in thetas:
        theta = tuple(int(t) for t in theta)
        if group and (len(group) == size or group[-1][:-1] != theta[:-1]):
            yield group
            group = []
        group.append(theta)
    if group:
        yield group


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
    loaded = benchmark.load_nonempty(cache_dir)
    key = benchmark.key(loaded)
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
        clean = evaluate_chunks(benchmark, loaded, final, mine, (shard, shards), device, progress)
        if shards == 1:
            return merge(benchmark, loaded, key, final, chunks, clean, device)
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
        return merge(benchmark, loaded, key, final, chunks, clean, device)


def evaluate_chunks(
    benchmark, loaded, final: Path, chunks, shard: tuple[int, int], device: str, progress: bool
) -> dict:
    """Write every missing chunk of `chunks` atomically; return the clean scores (ψ(D), metrics)."""
    parts = final.with_suffix(".parts")
    parts.mkdir(parents=True, exist_ok=True)
    keep_freed_memory()
    done = sum(verified(parts / chunk_name(c)) for c in chunks)
    record = RunLog(parts, *shard, device, reused=done)
    loaded.inputs, loaded.labels = loaded.inputs.to(device), loaded.labels.to(device)
    loaded.model.to(device)
    benchmark.prepare_metrics(loaded)
    clean = benchmark.score(loaded, loaded.inputs)
    lattice = benchmark.lattice
    rest = list(product(range(lattice.levels), repeat=lattice.n - len(chunks[0])))
    walker = PrefixWalker(benchmark.families, loaded.inputs, benchmark.perturb_seed)
    stack = stack_size(loaded.inputs, device)
    record.record["stacked"] = min(stack, lattice.levels)  # sibling sets scored per call
    label = f"ground truth {benchmark.name}" + (f" shard {shard[0]}/{shard[1]}" if shard[1] > 1 else "")
    with tqdm(
        total=len(chunks) * len(rest), initial=done * len(rest), desc=label, unit="cfg", disable=not progress
    ) as pbar:
        for chunk in chunks:
            path = parts / chunk_name(chunk)
            if verified(path):  # finished before (a corrupted one is reported and redone)
                continue
            if final.exists():  # an unsharded run merged everything meanwhile
                break
            df = rows_for(benchmark, loaded, walker, [chunk + r for r in rest], clean["psi"], pbar, stack)
            with atomic_path(path, checksum=True) as tmp:
                df.to_parquet(tmp, index=False)
            record.chunk_done(walker.applications)
    return clean


def merge(benchmark, loaded, key: str, final: Path, chunks, clean: dict, device: str) -> Path:
    """Concatenate the chunks in walk order into the table (caller holds the table's lock)."""
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
        "device": device,
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
