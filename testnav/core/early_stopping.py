"""The early-stopping rule both papers share (TestifAI §4.2, Algorithm 1).

A test σ visits D in batches of b inputs, in one fixed, seeded order of D (`input_order`); after
batch j the running estimate r_j = (passes so far) / (inputs so far) is kept, and the test stops as
soon as the last w estimates span less than δ. TestifAI measures its low-order tests under it
(testnav/tomography/executor.py); TestNav prices each configuration of a replay by the inputs it
reads before the rule stops it (testnav/groundtruth/inferences.py). Its defaults are
conf/settings/tomography.yaml's (`tomography.batch`, `window`, `delta`, `early_stopping`), read by
`tomography.core.Settings`, whose `rule` is the default rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UserError


@dataclass(frozen=True)
class Stopping:
    batch: int  # b
    window: int  # w
    delta: float  # δ
    enabled: bool

    def __post_init__(self):
        if self.batch < 1 or self.window < 1 or not self.delta >= 0:
            raise UserError(
                f"early stopping needs batch ≥ 1, window ≥ 1, delta ≥ 0 (got b={self.batch}, "
                f"w={self.window}, δ={self.delta})"
            )

    @classmethod
    def from_node(cls, node) -> Stopping:
        """From the `tomography:` node (batch, window, delta, early_stopping): TestifAI's rule,
        which also prices every configuration of a TestNav replay in inferences."""
        return cls(int(node.batch), int(node.window), float(node.delta), bool(node.early_stopping))

    def converged(self, estimates) -> bool:
        """Whether the last w running estimates span less than δ (the rule, for live and replayed tests)."""
        last = estimates[-self.window :]
        return self.enabled and len(last) == self.window and max(last) - min(last) < self.delta


def stop_after(outcomes: np.ndarray, rule: Stopping) -> int:
    """How many of these outcomes (in order) are observed before the rule stops."""
    n = len(outcomes)
    if not rule.enabled or n == 0:
        return n
    ends = np.minimum(np.arange(1, -(-n // rule.batch) + 1) * rule.batch, n)
    estimates = (np.cumsum(outcomes)[ends - 1] / ends).tolist()
    for j in range(len(ends)):
        if rule.converged(estimates[: j + 1]):
            return int(ends[j])
    return n


def input_order(n_inputs: int, seed: int) -> np.ndarray:
    """The seeded order in which every test visits D (batches are consecutive slices of it)."""
    return np.random.default_rng(seed).permutation(n_inputs)
