"""Low-order test execution under TestifAI's early-stopping rule (§4.2, Algorithm 1; the rule
itself, shared with TestNav's inference costs, is testnav/core/early_stopping.py). Every outcome
observed before a test stops is kept: they are the surrogate's training set.

Two sources of outcomes share this logic. `replay_tests` reads them from a ground-truth
table (the per-input `correct` column), so studies can compare regimes exactly and cheaply;
`LiveExecutor` perturbs and runs the model batch by batch, timing transformation and
inference separately. Random families are seeded per (prefix, batch), so live outcomes of
random families are a different — equally distributed — draw from the ground truth's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from ..core.early_stopping import Stopping, input_order, stop_after
from ..core.lattice import Lattice
from ..groundtruth.walk import prefix_generator


@dataclass
class ObservedTests:
    """What a tomography run observed: per test σ (lattice index), the outcomes it saw."""

    lattice: Lattice
    tests: dict = field(default_factory=dict)  # index -> bool array of observed outcomes (in D's seeded order)
    transform_seconds: float = 0.0
    inference_seconds: float = 0.0

    @property
    def inferences(self) -> int:
        return int(sum(len(v) for v in self.tests.values()))

    def table(self) -> pd.DataFrame:
        idx = np.array(sorted(self.tests), dtype=np.int64)
        theta = self.lattice.theta(idx)
        df = pd.DataFrame(theta, columns=[f"t{i + 1}" for i in range(self.lattice.n)])
        df["n"] = [len(self.tests[i]) for i in idx]
        df["passes"] = [int(self.tests[i].sum()) for i in idx]
        df["r"] = df["passes"] / df["n"]
        return df


def low_order(lattice: Lattice, max_order: int = 2) -> np.ndarray:
    return np.flatnonzero(lattice.orders <= max_order)


def replay_tests(outcomes, lattice: Lattice, tests, rule: Stopping, seed: int = 0) -> ObservedTests:
    """Early stopping on complete per-input outcomes: a ground truth's (|Θ|, N) array, rows in lattice
    order, or a mapping lattice index → (N,) bool holding at least `tests` (what other verbs stored)."""
    m = ObservedTests(lattice)
    order = None
    for t in np.asarray(tests, dtype=np.int64):
        row = np.asarray(outcomes[int(t)], bool)
        order = input_order(len(row), seed) if order is None else order
        seq = row[order]
        m.tests[int(t)] = seq[: stop_after(seq, rule)]
    return m


class LiveExecutor:
    """Evaluate tests on the benchmark's model, batch by batch, stopping early."""

    def __init__(self, benchmark, loaded, rule: Stopping, seed: int = 0, device: str = "cpu"):
        self.benchmark, self.loaded, self.rule, self.seed = benchmark, loaded, rule, seed
        self.order = torch.as_tensor(input_order(len(loaded.labels), seed), device=loaded.inputs.device)

    def _batch_outcomes(self, theta, j) -> tuple[np.ndarray, float, float]:
        from ..benchmarks.vision import View

        b = self.rule.batch
        idx = self.order[j * b : (j + 1) * b]
        t0 = time.perf_counter()
        x = self.loaded.inputs[idx]
        for i, level in enumerate(theta):
            if level:
                x = self.benchmark.families[i](
                    x, int(level), prefix_generator(self.benchmark.perturb_seed, theta[: i + 1], j)
                )
        t1 = time.perf_counter()
        view = View(x, self.loaded.model, self.benchmark.batch_size, amp=self.benchmark.amp)
        correct = (view.predictions == self.loaded.labels[idx]).cpu().numpy()
        return correct, t1 - t0, time.perf_counter() - t1

    def run(self, tests, progress: bool = False, desc: str = "low-order tests (tomography)") -> ObservedTests:
        """Every test of `tests` (lattice indices), each stopped early by the rule; `progress`: a bar
        of tests done, with the inferences spent against those of running every test on all of D."""
        from ..core.progress import bar

        lattice = self.benchmark.lattice
        m = ObservedTests(lattice)
        n_batches = -(-len(self.loaded.labels) // self.rule.batch)
        tests = np.asarray(tests, dtype=np.int64)
        full = len(tests) * len(self.loaded.labels)
        with bar(total=len(tests), desc=desc, unit="test", progress=progress) as pbar:
            for t in tests:
                theta = tuple(int(v) for v in lattice.theta(t))
                seen, estimates = [], []
                for j in range(n_batches):
                    correct, tt, ti = self._batch_outcomes(theta, j)
                    m.transform_seconds += tt
                    m.inference_seconds += ti
                    seen.append(correct)
                    total = np.concatenate(seen)
                    estimates.append(total.mean())
                    if self.rule.converged(estimates):
                        break
                m.tests[int(t)] = np.concatenate(seen)
                pbar.set_postfix_str(f"{m.inferences:,} of {full:,} inferences", refresh=False)
                pbar.update(1)
        return m
