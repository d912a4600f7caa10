"""Searches over Θ. Each is one module, instantiated from conf/search/*.yaml.

Protocol: `run(oracle, budget, seed) -> proposals`, the lattice indices proposed in order,
at most `budget` of them. Budget accounting follows Algorithm 1: every proposal counts,
whether or not the configuration was seen before (a repeat reuses the cached values).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..oracle import Oracle


class Search(Protocol):
    name: str

    def run(self, oracle: Oracle, budget: int, seed: int) -> np.ndarray: ...
