"""Live testing: an Oracle that perturbs the test set and runs the model when asked.

For a practitioner with a model and no ground-truth table. Each configuration is
evaluated at most once (memo); within a request, configurations are evaluated in lattice
order so that shared prefixes are perturbed once. Values are raw, not min–max normalised
(there is no Θ-wide range without evaluating all of Θ): δ = max(ψ(D) − ψ(T_θ), 0) is already
in [0, 1] for accuracy, and ρ = sign × φ (SSIM in [0, 1]; −KID ≤ 0). Pareto rank and NSGA-II's
crowding distance do not depend on the scale; the scalar s = min(δ, ρ) of GA and Greedy does.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ..core.oracle import Oracle
from ..errors import UserError
from .compute import measurements
from .store import PSI, Store
from .walk import PREFIX_CACHE_BYTES, PrefixWalker, sibling_groups


class LiveOracle(Oracle):
    """Evaluates configurations on an opened benchmark (a Session) when a search asks."""

    def __init__(self, session, rho_column: str, rho_sign: float):
        benchmark = session.benchmark
        if rho_column not in benchmark.metrics:
            raise UserError(
                f"live search: benchmark {benchmark.name} computes no '{rho_column}' "
                f"(valid: {', '.join(benchmark.metrics)})"
            )
        self.session, self.benchmark, self.lattice = session, benchmark, benchmark.lattice
        self.loaded = session.loaded
        self.psi_clean = session.psi_clean
        self.rho_column, self.rho_sign = rho_column, float(rho_sign)
        self.stack = session.stack  # its own walker: requests come out of lattice order, so it caches prefixes
        self.walker = PrefixWalker(
            benchmark.families, session.loaded.inputs, benchmark.perturb_seed, cache_bytes=PREFIX_CACHE_BYTES
        )
        self.memo: dict[int, dict] = {}
        self.scored = {rho_column}  # the metrics and signals scored: ρ's and what searches asked for
        self.outcomes: dict[int, np.ndarray] = {}  # lattice index → (N,) bool: which inputs the model got right
        self.seconds = 0.0
        self.store = Store(benchmark, session.loaded, session.cache_dir)
        self.stored = self._memoise(measurements(benchmark, session.loaded, session.cache_dir))

    def _memoise(self, entries: dict) -> set[int]:
        """`entries` (lattice index → (outcomes, {"psi": ψ, column: raw value, …}): what this oracle just
        measured, or what earlier verbs did, compute.py's `measurements`) that hold ρ's metric, memoised;
        their indices."""
        got = set()
        for index, (correct, values) in entries.items():
            if self.rho_column in values and PSI in values:
                memo = {k: v for k, v in values.items() if k != PSI}
                memo["delta"] = max(self.psi_clean - values[PSI], 0.0)
                memo["rho"] = self.rho_sign * values[self.rho_column]
                self.memo[index], self.outcomes[index] = memo, correct
                got.add(index)
        return got

    @torch.no_grad()
    def _fill(self, indices, names=()):
        """Score what is not memoised yet: ψ, ρ's metric and the metrics and signals `names` asks
        for (a search's own objectives), nothing else; an entry scored before without one of them
        is scored again with everything asked so far."""
        t0 = time.perf_counter()
        columns = {n for n in names if n not in ("delta", "rho")}
        self.scored |= columns
        if columns & self.benchmark.signals.keys():
            _ = self.session.signals_clean  # the signals calibrated, once, when a search first reads one
        todo = sorted(
            i for i in set(int(i) for i in indices) if i not in self.memo or not columns <= self.memo[i].keys()
        )  # in lattice order: siblings adjacent
        measured = {}
        with self.benchmark.scoring_only(self.scored):
            for group in sibling_groups((self.lattice.theta(i) for i in todo), self.stack):
                images = [self.walker.images(theta) for theta in group]
                for theta, s in zip(group, self.benchmark.score_sets(self.loaded, images, group)):
                    values = {k: v for k, v in s.items() if k not in ("psi", "correct")}
                    measured[int(self.lattice.index(theta))] = (
                        np.asarray(s["correct"], bool),
                        {**values, PSI: s["psi"]},
                    )
        self._memoise(measured)
        self.store.write(measured)
        self.seconds += time.perf_counter() - t0

    def evaluate(self, indices, names=("delta", "rho")) -> np.ndarray:
        idx = np.asarray(indices, dtype=np.int64).ravel()
        known = {"delta", "rho", *self.benchmark.metrics, *self.benchmark.signals}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UserError(f"live search: benchmark {self.benchmark.name} computes no signal {unknown[0]!r}")
        self._fill(idx, names)
        return np.array([[self.memo[int(i)][n] for n in names] for i in idx], dtype=float).reshape(len(idx), len(names))

    @property
    def evaluations(self) -> int:
        return len(self.memo)
