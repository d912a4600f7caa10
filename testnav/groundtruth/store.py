"""One store of measurements per model, data, families and lattice: what every verb measured, kept.

A configuration measured on the model live (a live search, a scan's search, a comparison's warm start,
a query's or `assert_robust`'s tomography) is measured on all of D; its per-input outcomes, ψ and the
raw value of each metric or signal scored are added here, so a later verb, in this process or the
next, reads them instead of measuring them again. Kept under
<cache_dir>/measured/<benchmark>-<key>/: one shard per call that measured (an .npz written
atomically: lattice indices, the outcomes bit-packed, ψ and each value scored, NaN where a column was
not scored), all read at once; a kill loses at most the shard being written. The key is the ground
truth's objectives key (`Benchmark.part_key`): the model's and the data's digests, the families in
their order with their severities, the levels, the metrics' settings and the code that computes
them, so the store and a ground-truth table agree on what a configuration's measurement is. A
complete ground-truth table in the same cache (`groundtruth`, a scan of the whole lattice) is read as
part of it (testnav/groundtruth/compute.py's `measurements`), and the ground truth's own pass reads
the store for the configurations it would otherwise measure.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import numpy as np

from ..core.cache import atomic_path

PSI = "psi"


class Store:
    """The measurements kept for an opened benchmark (`benchmark`, `loaded`) under `cache_dir`."""

    def __init__(self, benchmark, loaded, cache_dir):
        self.benchmark, self.loaded, self.cache_dir = benchmark, loaded, Path(cache_dir)
        key = benchmark.part_key(loaded, "objectives")
        self.dir = self.cache_dir / "measured" / f"{benchmark.name}-{key}"

    def read(self, into: dict | None = None) -> dict[int, tuple[np.ndarray, dict]]:
        """Lattice index → (its (N,) outcomes, {"psi": ψ, column: raw value, …}), `into` (what a complete
        ground truth holds: testnav/groundtruth/compute.py's `measurements`) updated by the shards in the
        order they were written (later values of a column replace earlier ones; a column one shard did
        not score keeps another's)."""
        out: dict[int, tuple[np.ndarray, dict]] = {} if into is None else into
        for shard in sorted(self.dir.glob("*.npz")) if self.dir.is_dir() else ():
            with np.load(shard, allow_pickle=False) as z:
                n = int(z["inputs"])
                correct = np.unpackbits(z["correct"], axis=1, count=n).astype(bool)
                columns = {str(c): z[f"v_{c}"] for c in z["columns"]}
                self.merge(out, z["indices"], correct, columns)
        return out

    @staticmethod
    def merge(out: dict, indices, correct: np.ndarray, columns: dict) -> None:
        for r, index in enumerate(np.asarray(indices, np.int64)):
            values = {c: float(v[r]) for c, v in columns.items() if np.isfinite(v[r])}
            old = out.get(int(index))
            out[int(index)] = (correct[r], {**old[1], **values} if old else values)

    def write(self, entries: dict[int, tuple[np.ndarray, dict]]) -> None:
        """Add `entries` (lattice index → (outcomes, values), as `read` gives them) as one shard."""
        if not entries:
            return
        indices = np.array(sorted(entries), np.int64)
        correct = np.stack([np.asarray(entries[i][0], bool) for i in indices])
        columns = sorted({c for i in indices for c in entries[i][1]})
        arrays = {f"v_{c}": np.array([entries[i][1].get(c, np.nan) for i in indices], float) for c in columns}
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.npz"
        with atomic_path(self.dir / name) as tmp, open(tmp, "wb") as fh:
            np.savez(
                fh,
                indices=indices,
                inputs=np.int64(correct.shape[1]),
                correct=np.packbits(correct, axis=1),
                columns=np.array(columns, dtype=str),
                **arrays,
            )
