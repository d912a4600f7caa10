"""Exhaustive evaluation of Θ: the ground-truth table every replay and figure reads.

Configurations are walked in lattice order, so T1 → T1T2 → T1T2T3 → … is computed once
per prefix and reused by every configuration that shares it (1,295 family applications
for 6⁴, instead of 5,184 naive). The walk is cut into chunks (one per prefix of the first
two families) that are written atomically as they finish, so a killed run resumes at the
first missing chunk; a file lock makes concurrent callers wait and reuse the result.

Randomness is tied to the prefix, not to the walk: family i at a node draws from a
generator seeded by (perturb_seed, θ1..θi), so a prefix gives the same images however
(and in whichever process) it is reached.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from .cache import atomic_path, file_lock, stable_hash, verified, write_json_atomic

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


def rows_for(benchmark, loaded, walker: PrefixWalker, thetas, psi_clean: float, pbar) -> pd.DataFrame:
    rows = []
    for theta in thetas:
        theta = tuple(int(t) for t in theta)
        s = benchmark.score(loaded, walker.images(theta), theta=theta)
        row = {f"t{i + 1}": int(t) for i, t in enumerate(theta)}
        row["psi"] = s.pop("psi")
        row["delta"] = max(psi_clean - row["psi"], 0.0)
        correct = s.pop("correct")
        row.update(s)
        row["correct"] = correct.tolist()
        rows.append(row)
        pbar.update(1)
    return pd.DataFrame(rows)


def table_path(cache_dir, benchmark, key: str) -> Path:
    return Path(cache_dir) / "groundtruth" / f"{benchmark.name}-{key}.parquet"


def compute_groundtruth(benchmark, cache_dir, device: str = "cpu", progress: bool = True) -> Path:
    """Return the path of the benchmark's ground-truth table, computing what is missing."""
    loaded = benchmark.load_nonempty(cache_dir)
    key = benchmark.key(loaded)
    final = table_path(cache_dir, benchmark, key)
    if done(final):
        return final
    with file_lock(final.with_suffix(".lock")):
        if done(final):  # another process finished it while we waited
            return final
        t0 = time.time()
        loaded.inputs, loaded.labels = loaded.inputs.to(device), loaded.labels.to(device)
        loaded.model.to(device)
        benchmark.prepare_metrics(loaded)
        clean = benchmark.score(loaded, loaded.inputs)
        lattice = benchmark.lattice
        parts = final.with_suffix(".parts")
        parts.mkdir(parents=True, exist_ok=True)
        chunk_depth = min(2, lattice.n - 1)
        chunks = list(product(range(lattice.levels), repeat=chunk_depth))
        rest = list(product(range(lattice.levels), repeat=lattice.n - chunk_depth))
        finished = sum(verified(parts / chunk_name(c)) for c in chunks)
        walker = PrefixWalker(benchmark.families, loaded.inputs, benchmark.perturb_seed)
        with tqdm(total=lattice.size, initial=finished * len(rest), desc=f"ground truth {benchmark.name}",
                  unit="cfg", disable=not progress) as pbar:
            for chunk in chunks:
                path = parts / chunk_name(chunk)
                if verified(path):
                    continue
                df = rows_for(benchmark, loaded, walker, [chunk + r for r in rest], clean["psi"], pbar)
                with atomic_path(path, checksum=True) as tmp:
                    df.to_parquet(tmp, index=False)
        table = pd.concat([pd.read_parquet(parts / chunk_name(c)) for c in chunks], ignore_index=True)
        meta = {"benchmark": benchmark.name, "key": key, "psi_clean": clean["psi"], "n_inputs": len(loaded.labels),
                "families": [f.describe() for f in benchmark.families], "levels": lattice.levels,
                "metrics_clean": {k: v for k, v in clean.items() if k not in ("psi", "correct")},
                "family_applications": walker.applications, "naive_applications": lattice.size * lattice.n,
                "seconds": round(time.time() - t0, 2), "device": device}
        write_json_atomic(final.with_suffix(".json"), meta, checksum=True)  # first: a table never lacks its meta
        with atomic_path(final, checksum=True) as tmp:
            table.to_parquet(tmp, index=False)
        shutil.rmtree(parts, ignore_errors=True)
        log.info("ground truth %s: %d configurations in %.1f s, %d family applications (naive %d)",
                 benchmark.name, lattice.size, meta["seconds"], walker.applications, meta["naive_applications"])
    return final


def done(final: Path) -> bool:
    """The table and its metadata are both on disk and intact (a corrupted one is recomputed)."""
    return verified(final.with_suffix(".json")) and verified(final)


def chunk_name(chunk: tuple[int, ...]) -> str:
    return "chunk-" + "-".join(map(str, chunk)) + ".parquet"


def read_meta(table: Path) -> dict:
    p = Path(table).with_suffix(".json")
    return json.loads(p.read_text()) if p.exists() else {}


def outcomes(table: pd.DataFrame) -> np.ndarray:
    """Per-input correctness as an (|Θ|, N) bool array, rows in table order (TestifAI's input)."""
    return np.stack(table["correct"].to_numpy()).astype(bool)
