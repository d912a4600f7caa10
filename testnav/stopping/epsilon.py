"""ε-dominance for two maximised objectives (δ, ρ): the test behind the certificate's p_good.

A point x is ε-dominated by a front F when some f ∈ F is, after adding ε to each of its
objectives, at least as good as x on both: f_δ + ε_δ ≥ x_δ and f_ρ + ε_ρ ≥ x_ρ. A measured
front is ε-complete when every configuration is ε-dominated by it: nothing unmeasured improves
it by more than ε in either objective (the additive ε-indicator of Zitzler et al. 2003 is ≤ ε).
At ε = 0 this is weak dominance, so an exactly complete front is ε-complete for every ε ≥ 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def eps_dominated(points: np.ndarray, front: np.ndarray, eps) -> np.ndarray:
    """Bool per point of `points` (..., 2): ε-dominated by some point of `front` (f, 2);
    `eps` a scalar or (ε_δ, ε_ρ). O((n + f) log f)."""
    points = np.asarray(points, dtype=float)
    if len(front) == 0:
        return np.zeros(points.shape[:-1], bool)
    e = np.broadcast_to(np.asarray(eps, dtype=float), (2,))
    order = np.argsort(front[:, 0])
    fd, fr = front[order, 0] + e[0], front[order, 1] + e[1]
    best = np.r_[np.maximum.accumulate(fr[::-1])[::-1], -np.inf]  # best shifted ρ among shifted δ ≥ fd[i]
    return best[np.searchsorted(fd, points[..., 0], side="left")] >= points[..., 1]


def eps_complete(front: np.ndarray, rest: np.ndarray, eps) -> bool:
    """Whether `front` ε-dominates every point of `rest` (the configurations not measured)."""
    return bool(eps_dominated(rest, front, eps).all()) if len(rest) else True


def scale(values: np.ndarray) -> np.ndarray:
    """(range δ, range ρ) over `values` (n, 2), 1 where a range is 0: the units in which ε is read.
    On a ground-truth table, normalised over Θ, the measured range is at most 1, so ε in these
    units is at most ε in the table's; live, where values are raw, it is the same reading."""
    if len(values) == 0:
        return np.ones(2)
    span = np.ptp(values, axis=0)
    return np.where(span > 0, span, 1.0)


AUTO = "auto"  # certificate.epsilon=auto: the tolerance is the measurement's resolution


@dataclass(frozen=True)
class Resolution:
    """The resolution of the accuracies behind δ: the widest half-width `half_width` of Wilson's
    interval of an accuracy measured on `inputs` inputs at `confidence` (at ψ = 1/2;
    testnav.core.intervals.half_width). `delta_span` is the raw δ range that the certificate's δ
    was divided by (a replayed table, min–max normalised over Θ; 1 live, where δ is raw), so the
    tolerance on δ is half_width / delta_span in the certificate's units: the same accuracy either
    way. ρ has no binomial resolution: its tolerance is the same number as a share of ρ's measured
    range, the reading a numeric ε has for both objectives (docs/tomonav.md)."""

    half_width: float
    inputs: int
    confidence: float = 0.95
    delta_span: float = 1.0

    @classmethod
    def at(cls, inputs: int, confidence: float = 0.95, delta_span: float = 1.0) -> Resolution:
        from ..core.intervals import half_width

        return cls(half_width(int(inputs), confidence), int(inputs), float(confidence), float(delta_span))

    def tolerance(self, values: np.ndarray) -> np.ndarray:
        """(ε_δ, ε_ρ) in the units of `values` (n, 2), the configurations measured so far."""
        return np.array([self.half_width / self.delta_span, self.half_width * scale(values)[1]])


def tolerance(epsilon, values: np.ndarray, resolution: Resolution | None = None) -> np.ndarray:
    """(ε_δ, ε_ρ) in the units of `values` (n, 2): a number ε is that share of each objective's
    measured range; `auto`, the resolution's."""
    if epsilon == AUTO:
        if resolution is None:
            raise ValueError("epsilon=auto needs the measurement's resolution")
        return resolution.tolerance(values)
    return epsilon * scale(values)


def representatives(front: np.ndarray, eps) -> np.ndarray:
    """Bool per member of a measured front (f, 2): whether it is told apart from the others at
    tolerance `eps` (ε_δ, ε_ρ). Swept from the most faithful member (highest ρ) to the most
    damaging, a member is kept unless a kept one ε-dominates it: one it cannot beat by more than
    ε on either objective, here by more than ε_δ in δ (the kept ones are all at least as
    faithful). What is left out is, at this resolution, no worse for the model than a kept member
    that stays closer to the clean input; every member is ε-dominated by a kept one."""
    front = np.asarray(front, dtype=float).reshape(-1, 2)
    keep = np.zeros(len(front), bool)
    for i in np.lexsort((-front[:, 0], -front[:, 1])):  # ρ descending, then δ descending
        if not eps_dominated(front[i], front[keep], eps):
            keep[i] = True
    return keep


def resolution_tolerance(summary: dict) -> np.ndarray | None:
    """(ε_δ, ε_ρ) in the units of the run's trace where its certificate read epsilon=auto, else None."""
    if summary.get("epsilon_setting") != AUTO:
        return None
    return np.array([summary["epsilon_delta"], summary["epsilon_rho"]], dtype=float)
