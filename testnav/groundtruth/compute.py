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

The table is cached as parts, each under a key that hashes what it depends on
(`Benchmark.part_key`): the objectives (ψ, δ, the fidelity metrics, the per-input outcomes) and
the signals (the input-level signals, the coverage signals' float64 pass among them). A run
asks only for the parts it reads (`signals=False` when no signal column is read); a missing
part is computed alone, its chunks beside the others', and the table a reader opens,
`groundtruth/<name>-<key>.parquet`, is assembled from the parts computed so far: the same
columns in the same order as a table computed in one pass, byte for byte (tests). A walk that
computes both parts scores them together, one forward per set.
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
from ..core.table import level_columns
from .session import open as open_session
from .shards import RunLog, read_runs, shard_chunks
from .store import PSI
from .walk import PrefixWalker, sibling_groups

log = logging.getLogger(__name__)


def rows_for(
    benchmark, loaded, walker: PrefixWalker, thetas, psi_clean: float, pbar, stack: int = 1, stored=None
) -> pd.DataFrame:
    """One table row per θ; `stack` sibling sets scored in one call (`Benchmark.score_sets`). `stored`:
    lattice index → (outcomes, values) another verb measured on all of D (testnav/groundtruth/store.py),
    read instead where they hold every column scored (an image's scores do not depend on the batch or
    the sibling sets it was scored with, so they are the values this pass would compute)."""
    rows: list[dict] = []
    lattice, columns = benchmark.lattice, [*benchmark.metrics, *benchmark.signals]  # what is scored now

    def add(theta, psi: float, values: dict, correct) -> None:
        row: dict = {f"t{i + 1}": int(t) for i, t in enumerate(theta)}
        row |= {"psi": psi, "delta": max(psi_clean - psi, 0.0), **values}
        row["correct"] = np.asarray(correct, bool).tolist()
        rows.append(row)

    index = {tuple(t): int(lattice.index(np.asarray(t, np.int64))) for t in thetas}
    stored = {i: e for i, e in (stored or {}).items() if {PSI, *columns} <= e[1].keys()}
    read = [t for t in thetas if index[tuple(t)] in stored]
    for theta in read:
        correct, values = stored[index[tuple(theta)]]
        add(theta, values[PSI], {c: values[c] for c in columns}, correct)
    pbar.update(len(read))
    measure = [t for t in thetas if index[tuple(t)] not in stored]
    for group in sibling_groups(measure, stack):
        images = [walker.images(theta) for theta in group]
        for theta, s in zip(group, benchmark.score_sets(loaded, images, group)):
            psi, correct = s.pop("psi"), s.pop("correct")
            add(theta, psi, s, correct)
        pbar.update(len(group))
    order = {tuple(t): k for k, t in enumerate(thetas)}
    rows.sort(key=lambda r: order[tuple(r[f"t{i + 1}"] for i in range(lattice.n))])
    return pd.DataFrame(rows)


PARTS = ("objectives", "signals")
CHUNK_PREFIX = {"objectives": "chunk", "signals": "signals"}  # a chunk's file name, per part


def table_path(cache_dir, benchmark, key: str) -> Path:
    return Path(cache_dir) / "groundtruth" / f"{benchmark.name}-{key}.parquet"


def part_path(cache_dir, benchmark, part: str, key: str) -> Path:
    return Path(cache_dir) / "groundtruth" / "parts" / f"{benchmark.name}-{part}-{key}.parquet"


def parts_for(benchmark, signals: bool = True) -> list[str]:
    """The parts a table must hold: the objectives always, the signals when asked for and defined."""
    return ["objectives", *(["signals"] if signals and benchmark.signals else [])]


def part_columns(benchmark, part: str, df: pd.DataFrame) -> list[str]:
    """A part's columns of `df` (rows scored for it), t1..tn included, in the table's order: the
    signals', or every other one (ψ, δ, the metrics, any column the task adds, the outcomes)."""
    if part == "objectives":
        return [c for c in df.columns if c not in benchmark.signals]
    return [*level_columns(df), *(c for c in df.columns if c in benchmark.signals)]


def chunk_prefixes(lattice) -> list[tuple[int, ...]]:
    """The unit of resumption and of sharding: one prefix of the first two families, in walk order."""
    return list(product(range(lattice.levels), repeat=min(2, lattice.n - 1)))


class Request:
    """What a run asks of a benchmark's ground truth: the table at `path` holding `parts` (and any
    other part already on disk), each part cached at `part(name)` under its own key."""

    def __init__(self, session, cache_dir, parts):
        benchmark, loaded = session.benchmark, session.loaded
        self.session, self.cache_dir, self.parts = session, cache_dir, list(parts)
        self.key = benchmark.key(loaded)
        self.path = table_path(cache_dir, benchmark, self.key)
        self.chunks_dir = self.path.with_suffix(".parts")
        self.keys = {p: benchmark.part_key(loaded, p) for p in parts_for(benchmark)}

    def part(self, name: str) -> Path:
        return part_path(self.cache_dir, self.session.benchmark, name, self.keys[name])

    def todo(self) -> list[str]:
        """The asked-for parts not cached yet."""
        return [p for p in self.parts if not complete(self.part(p))]

    def chunk(self, chunk, part: str) -> Path:
        return self.chunks_dir / chunk_name(chunk, part)

    def missing(self, chunks, parts) -> list:
        """The chunks of which some part of `parts` is not on disk."""
        return [c for c in chunks if not all(verified(self.chunk(c, p)) for p in parts)]


def compute_groundtruth(
    benchmark,
    cache_dir,
    device: str = "cpu",
    progress: bool | None = True,
    shards: int = 1,
    shard: int = 0,
    signals: bool = True,
) -> Path | None:
    """Return the path of the benchmark's ground-truth table, computing what is missing.

    `signals=False`: the table need hold only the objectives part (a run that reads no signal
    column); a signals part already on disk is included all the same. With shards=k > 1, only
    shard `shard`'s chunks are computed (testnav/groundtruth/shards.py says which, and why the
    cut keeps prefix sharing); the run that finds every chunk on disk merges them and returns the
    table, a shard that finishes before the others returns None.
    """
    chunks = chunk_prefixes(benchmark.lattice)
    mine = shard_chunks(chunks, shards, shard)  # checked before the model is loaded
    session = open_session(benchmark, cache_dir, device)
    request = Request(session, cache_dir, parts_for(benchmark, signals))
    final = request.path
    if complete(final, request.parts):
        return final
    table_lock = final.with_suffix(".lock")
    # one lock per shard: shards run side by side, a duplicate of the same shard waits and reuses
    own_lock = table_lock if shards == 1 else request.chunks_dir / f"shard-{shard}-of-{shards}.lock"
    with file_lock(own_lock):
        if complete(final, request.parts):  # another process finished it while we waited
            return final
        evaluate_chunks(request, mine, (shard, shards), progress)
        if shards == 1:
            return assemble(request, chunks)
    todo = request.todo()
    missing = request.missing(chunks, todo)
    if missing:
        log.info(
            "ground truth %s shard %d/%d done; %d chunks of other shards still missing",
            benchmark.name,
            shard,
            shards,
            len(missing),
        )
        return None
    with file_lock(table_lock):
        if complete(final, request.parts):
            return final
        return assemble(request, chunks)


def whole_table(benchmark, cache_dir, device: str = "cpu", progress: bool | None = True, signals: bool = True) -> Path:
    """`compute_groundtruth` in one shard, which assembles the table itself: its path."""
    path = compute_groundtruth(benchmark, cache_dir, device, progress=progress, signals=signals)
    assert path is not None  # only a shard of several can finish without the table
    return path


def evaluate_chunks(request: Request, chunks, shard: tuple[int, int], progress: bool) -> None:
    """Write every missing chunk of `chunks` atomically, for each part not cached yet: the parts a
    chunk lacks are scored together, in one walk and one forward per set."""
    session = request.session
    benchmark = session.benchmark
    todo = request.todo()
    if not todo:
        return
    request.chunks_dir.mkdir(parents=True, exist_ok=True)
    done = len(chunks) - len(request.missing(chunks, todo))
    record = RunLog(request.chunks_dir, *shard, session.device, reused=done, computes=todo)
    lattice = benchmark.lattice
    rest = list(product(range(lattice.levels), repeat=lattice.n - len(chunks[0])))
    psi_clean, walker, stack = session.psi_clean, session.walker, session.stack
    stored = stored_entries(benchmark, session.loaded, request.cache_dir)
    if "signals" in todo:
        _ = session.signals_clean  # the signals calibrated on the training inputs, only when computed
    record.record["stacked"] = min(stack, lattice.levels)  # sibling sets scored per call
    label = f"ground truth {benchmark.name}" + (f" shard {shard[0]}/{shard[1]}" if shard[1] > 1 else "")
    if todo != parts_for(benchmark):
        label += f" ({', '.join(todo)})"
    with bar(
        total=len(chunks) * len(rest), initial=done * len(rest), desc=label, unit="cfg", progress=progress
    ) as pbar:
        for chunk in chunks:
            lacking = [p for p in todo if not verified(request.chunk(chunk, p))]  # a corrupted one is redone
            if not lacking:
                continue
            if all(request.part(p).exists() for p in todo):  # an unsharded run merged everything meanwhile
                break
            scored = [
                *(benchmark.metrics if "objectives" in lacking else ()),
                *(benchmark.signals if "signals" in lacking else ()),
            ]
            with benchmark.scoring_only(scored):
                thetas = [chunk + r for r in rest]
                df = rows_for(benchmark, session.loaded, walker, thetas, psi_clean, pbar, stack, stored)
            for p in lacking:
                with atomic_path(request.chunk(chunk, p), checksum=True) as tmp:
                    df[part_columns(benchmark, p, df)].to_parquet(tmp, index=False)
            record.chunk_done(walker.applications)


def measurements(benchmark, loaded, cache_dir) -> dict[int, tuple[np.ndarray, dict]]:
    """Everything measured on all of D for this model, data, families and lattice: a complete ground
    truth's rows, then the store's shards (testnav/groundtruth/store.py), lattice index → (outcomes, values)."""
    from .store import Store

    out: dict[int, tuple[np.ndarray, dict]] = {}
    whole = table_path(cache_dir, benchmark, benchmark.key(loaded))
    if complete(whole):
        df = pd.read_parquet(whole)
        levels = df[[f"t{i + 1}" for i in range(benchmark.lattice.n)]].to_numpy(np.int64)
        columns = {c: df[c].to_numpy(float) for c in (PSI, *benchmark.metrics, *benchmark.signals) if c in df}
        Store.merge(out, benchmark.lattice.index(levels), outcomes(df), columns)
    return Store(benchmark, loaded, cache_dir).read(out)


def stored_entries(benchmark, loaded, cache_dir) -> dict:
    """What other verbs measured on all of D (testnav/groundtruth/store.py) that a table row can hold: an
    entry whose columns are ψ and the benchmark's metrics and signals, none a task adds beyond them."""
    from .store import Store

    known = {PSI, *benchmark.metrics, *benchmark.signals}
    return {i: e for i, e in Store(benchmark, loaded, cache_dir).read().items() if e[1].keys() <= known}


def merge_part(request: Request, part: str, chunks) -> None:
    """Concatenate one part's chunks in walk order into its cached file, with its metadata
    (caller holds the table's lock; every chunk of the part is on disk)."""
    session = request.session
    benchmark, loaded, clean = session.benchmark, session.loaded, session.clean
    lattice = benchmark.lattice
    files = [request.chunk(c, part) for c in chunks]
    table = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    runs = [r for r in read_runs(request.chunks_dir) if part in r.get("parts", PARTS)]
    meta = {"benchmark": benchmark.name, "part": part, "key": request.keys[part]}
    if part == "objectives":
        meta.update(
            {
                "psi_clean": clean["psi"],
                "n_inputs": len(loaded.labels),
                "families": [f.describe() for f in benchmark.families],
                "task": benchmark.task_description(),  # the readings behind the numbers, for the report
                "metric_settings": {k: m.describe() for k, m in benchmark.metrics.items()},
                "levels": lattice.levels,
                "metrics_clean": {k: v for k, v in clean.items() if k not in ("psi", "correct")},
            }
        )
    else:
        meta["signal_settings"] = {k: m.describe() for k, m in benchmark.signals.items()}
        meta["signals_clean"] = session.signals_clean
    meta.update(
        {
            "family_applications": sum(r["family_applications"] for r in runs),
            "naive_applications": lattice.size * lattice.n,
            "seconds": round(sum(r["seconds"] for r in runs), 2),
            "device": session.device,
            "runs": runs,
        }
    )
    path = request.part(part)
    write_json_atomic(path.with_suffix(".json"), meta, checksum=True)  # first: a table never lacks its meta
    with atomic_path(path, checksum=True) as tmp:
        table.to_parquet(tmp, index=False)
    for f in files:
        f.unlink(missing_ok=True)
        checksum_path(f).unlink(missing_ok=True)
    if not any(request.chunks_dir.glob("*.parquet")):
        shutil.rmtree(request.chunks_dir, ignore_errors=True)
    log.info(
        "ground truth %s, %s part: %d configurations in %.1f s over %d run(s), %d family applications (naive %d)",
        benchmark.name,
        part,
        lattice.size,
        meta["seconds"],
        len(runs),
        meta["family_applications"],
        meta["naive_applications"],
    )


def assemble(request: Request, chunks) -> Path:
    """Merge the parts whose chunks are all on disk, then write the table from every part cached
    (the asked-for ones at least): the objectives' columns with the signals' before `correct`,
    as one pass writes them (caller holds the table's lock)."""
    benchmark = request.session.benchmark
    for part in request.todo():
        merge_part(request, part, chunks)
    held = [p for p in parts_for(benchmark) if p in request.parts or complete(request.part(p))]
    table = pd.read_parquet(request.part("objectives"))
    meta = read_meta(request.part("objectives"))
    runs = list(meta["runs"])
    if "signals" in held:
        signals = pd.read_parquet(request.part("signals"))
        t = level_columns(table)
        if not table[t].equals(signals[t]):
            raise RuntimeError(f"ground truth {benchmark.name}: the signals part is not in the objectives' walk order")
        meta_s = read_meta(request.part("signals"))
        table = pd.concat([table.drop(columns="correct"), signals.drop(columns=t), table[["correct"]]], axis=1)
        meta["metrics_clean"] = {**meta["metrics_clean"], **meta_s["signals_clean"]}
        runs += [r for r in meta_s["runs"] if r not in runs]  # a run that scored both parts counts once
    del meta["part"]
    meta.update(
        {
            "key": request.key,
            "family_applications": sum(r["family_applications"] for r in runs),
            "seconds": round(sum(r["seconds"] for r in runs), 2),
            "runs": runs,
            "parts": {p: request.keys[p] if p in held else None for p in parts_for(benchmark)},
        }
    )
    final = request.path
    write_json_atomic(final.with_suffix(".json"), meta, checksum=True)  # first: a table never lacks its meta
    with atomic_path(final, checksum=True) as tmp:
        table.to_parquet(tmp, index=False)
    return final


def complete(final: Path, parts=("objectives",)) -> bool:
    """The table (or a part) and its metadata are both on disk and intact, and the table holds
    `parts`. If either file is missing or corrupted the table is removed too, so the run
    recomputes both instead of trusting half a product; an intact table that lacks a part is
    kept until the part is added."""
    if verified(final.with_suffix(".json")) and verified(final):
        held = read_meta(final).get("parts")
        return held is None or all(held.get(p) for p in parts)  # a part's own file names no parts
    final.unlink(missing_ok=True)
    checksum_path(final).unlink(missing_ok=True)
    return False


def chunk_name(chunk: tuple[int, ...], part: str = "objectives") -> str:
    return f"{CHUNK_PREFIX[part]}-" + "-".join(map(str, chunk)) + ".parquet"


def read_meta(table: Path) -> dict:
    p = Path(table).with_suffix(".json")
    return json.loads(p.read_text()) if p.exists() else {}


def outcomes(table: pd.DataFrame) -> np.ndarray:
    """Per-input correctness as an (|Θ|, N) bool array, rows in table order (TestifAI's input)."""
    return np.stack(table["correct"].to_numpy()).astype(bool)
