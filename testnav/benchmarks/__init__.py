"""Benchmarks: data D, a model, n perturbation families × ℓ levels, ψ and fidelity metrics.

One benchmark per module plus one conf/benchmark YAML, built by name with `make` (as searches,
fidelity metrics, signals and families are). The ground-truth pass (testnav.groundtruth.compute)
only needs what `VisionBenchmark` exposes, so a new image benchmark implements `load()` and nothing
else.
"""

from __future__ import annotations

from ..registry import Registry
from .base import Benchmark

REGISTRY = Registry("benchmark", Benchmark, "benchmark")


def names() -> list[str]:
    """Every benchmark of conf/benchmark."""
    return REGISTRY.names()


def make(name, **overrides) -> Benchmark:
    """The benchmark `name` (conf/benchmark/<name>.yaml, or a node Hydra composed already) with
    `overrides` of its settings, e.g. `make("mnist5k", test_per_class=10)`."""
    return REGISTRY.make(name, **overrides)
