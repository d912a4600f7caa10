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

from ..errors import UserError
from ..core.memory import keep_freed_memory
from .compute import PrefixWalker, sibling_groups, stack_size


class LiveOracle:
    def __init__(self, benchmark, cache_dir, device: str, rho_column: str, rho_sign: float):
        try:
            self.loaded = benchmark.load_nonempty(cache_dir)
        except UserError:
            raise
        except Exception as e:
            raise UserError(
                f"live search: benchmark {benchmark.name} cannot be loaded "
                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
            ) from e
        if rho_column not in benchmark.metrics:
            raise UserError(
                f"live search: benchmark {benchmark.name} computes no '{rho_column}' "
                f"(valid: {', '.join(benchmark.metrics)})"
            )
        self.benchmark, self.lattice = benchmark, benchmark.lattice
        keep_freed_memory()
        self.loaded.inputs, self.loaded.labels = self.loaded.inputs.to(device), self.loaded.labels.to(device)
        self.loaded.model.to(device)
        benchmark.prepare_metrics(self.loaded)
        self.psi_clean = benchmark.score(self.loaded, self.loaded.inputs)["psi"]
        self.rho_column, self.rho_sign = rho_column, float(rho_sign)
        self.walker = PrefixWalker(benchmark.families, self.loaded.inputs, benchmark.perturb_seed)
        self.stack = stack_size(self.loaded.inputs, device)
        self.memo: dict[int, dict] = {}
        self.seconds = 0.0

    @torch.no_grad()
    def _fill(self, indices):
        t0 = time.perf_counter()
        todo = sorted(set(int(i) for i in indices) - self.memo.keys())  # in lattice order: siblings adjacent
        for group in sibling_groups((self.lattice.theta(i) for i in todo), self.stack):
            images = [self.walker.images(theta) for theta in group]
            for theta, s in zip(group, self.benchmark.score_sets(self.loaded, images, group)):
                values = {k: v for k, v in s.items() if k not in ("psi", "correct")}
                values["delta"] = max(self.psi_clean - s["psi"], 0.0)
                values["rho"] = self.rho_sign * s[self.rho_column]
                self.memo[self.lattice.index(theta)] = values
        self.seconds += time.perf_counter() - t0

    def evaluate(self, indices, names=("delta", "rho")) -> np.ndarray:
        idx = np.asarray(indices, dtype=np.int64).ravel()
        self._fill(idx)
        try:
            return np.array([[self.memo[int(i)][n] for n in names] for i in idx], dtype=float).reshape(
                len(idx), len(names)
            )
        except KeyError as e:
            raise UserError(f"live search: benchmark {self.benchmark.name} computes no signal {e.args[0]!r}") from None

    def table(self, names=("delta", "rho")):
        raise UserError("a live oracle has no ground-truth table to read whole (a replay-only search asked for one)")

    @property
    def evaluations(self) -> int:
        return len(self.memo)
