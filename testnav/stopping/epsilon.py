"""ε-dominance for two maximised objectives (δ, ρ): the test behind the certificate's p_good.

A point x is ε-dominated by a front F when some f ∈ F is, after adding ε to each of its
objectives, at least as good as x on both: f_δ + ε_δ ≥ x_δ and f_ρ + ε_ρ ≥ x_ρ. A measured
front is ε-complete when every configuration is ε-dominated by it: nothing unmeasured improves
it by more than ε in either objective (the additive ε-indicator of Zitzler et al. 2003 is ≤ ε).
At ε = 0 this is weak dominance, so an exactly complete front is ε-complete for every ε ≥ 0.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .measured import MeasuredSet


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
PROBED = 16  # front members whose ρ is read per input at a checkpoint (evenly spaced along the front; cached)


def mean_half_widths(values: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """Per column of `values` (N, k), the half-width of the normal interval on its mean at `confidence`:
    z · s / √N with s the column's standard deviation over its N inputs (statsmodels' DescrStatsW,
    zconfint_mean). A column of per-input differences d_i = x_i − y_i (the outcomes of two configurations
    on the same inputs) gives the paired difference's: z · sd(d) / √N."""
    from statsmodels.stats.weightstats import DescrStatsW

    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    if values.shape[1] == 0 or values.shape[0] < 2:
        return np.full(values.shape[1], np.nan)
    low, high = DescrStatsW(values).zconfint_mean(alpha=1 - confidence)
    return np.atleast_1d((np.asarray(high) - np.asarray(low)) / 2)


@dataclass(frozen=True)
class Resolution:
    """The measurement's resolution at one checkpoint, in the values' raw units, each objective's from
    its own sampling error on the same `inputs`, at `confidence`: `delta`, the half-width of δ(θ) =
    ψ(D) − ψ(T_θ), the paired difference of two accuracies measured on the same inputs (z · sd of the
    per-input differences / √N), and `rho`, the half-width of ρ(θ) (`rho_method`: "per-input", z · SE
    over the metric's per-input values, or "bootstrap", the standard error of a set-level metric
    resampled over the inputs; NaN where it is not known); each the median over the measured front's
    members (`members` of them; ρ's over at most PROBED). `delta_span`, `rho_span`: the raw ranges the
    certificate's δ and ρ were divided by (a replayed table, min–max normalised over Θ; 1 live, where
    they are raw). docs/tomonav.md, "At the measurement's resolution"."""

    delta: float
    rho: float
    inputs: int
    confidence: float = 0.95
    delta_span: float = 1.0
    rho_span: float = 1.0
    rho_method: str | None = None
    members: int = 0

    def tolerance(self) -> np.ndarray:
        """(ε_δ, ε_ρ) in the certificate's units (NaN where not known)."""
        return np.array([self.delta / self.delta_span, self.rho / self.rho_span])


class Resolver(ABC):
    """What the certificate reads the resolution from at each checkpoint (`read`); `inputs`,
    `confidence` and `rho_method` are known before any is read (None: ρ's is not known here)."""

    inputs: int
    confidence: float
    rho_method: str | None

    @abstractmethod
    def read(self, measured: MeasuredSet) -> Resolution:
        """The resolution at the measured set (its front and the values measured)."""


class Fixed(Resolver):
    """The same resolution at every checkpoint (a generated table read as if measured on some N)."""

    def __init__(self, resolution: Resolution):
        self.resolution = resolution
        self.inputs, self.confidence = resolution.inputs, resolution.confidence
        self.rho_method = resolution.rho_method

    def read(self, measured: MeasuredSet) -> Resolution:
        return self.resolution


class PerInput(Resolver):
    """The resolution read off the per-input values of the measured front's members: `outcomes` (which
    inputs the model got right under each θ, and under none, `clean`) for δ and, where `rho_method` is
    set, `rho_half_widths` for ρ (testnav/pipeline/resolution.py: a ground-truth table's, a live
    oracle's). ρ's half-widths are read for at most PROBED members per checkpoint and kept per θ (they
    may cost a perturbation of the data set)."""

    def __init__(self, inputs: int, confidence: float, delta_span=1.0, rho_span=1.0, rho_method=None):
        self.inputs, self.confidence, self.rho_method = int(inputs), float(confidence), rho_method
        self.delta_span, self.rho_span = float(delta_span), float(rho_span)
        self._rho: dict[int, float] = {}

    @abstractmethod
    def outcomes(self, indices: np.ndarray) -> np.ndarray:
        """(k, N) bool: which inputs the model got right under each θ of `indices` (measured)."""

    @abstractmethod
    def clean(self) -> np.ndarray:
        """(N,) bool: which inputs the model gets right unperturbed (θ = 0)."""

    def rho_half_widths(self, indices: np.ndarray) -> np.ndarray:
        """(k,) ρ's half-width at each θ of `indices`, raw units (NaN: not known)."""
        return np.full(len(indices), np.nan)

    def read(self, measured: MeasuredSet) -> Resolution:
        front = measured.members[np.argsort(-measured.values[measured.members, 1], kind="stable")]  # by ρ
        lost = self.clean()[None].astype(np.int8) - self.outcomes(front)  # per input: δ's paired differences
        delta = mean_half_widths(lost.T, self.confidence)
        rho = np.nan
        if self.rho_method is not None and len(front):
            probe = front[np.unique(np.linspace(0, len(front) - 1, min(PROBED, len(front))).round().astype(int))]
            todo = [int(i) for i in probe if int(i) not in self._rho]
            if todo:
                self._rho.update(zip(todo, map(float, self.rho_half_widths(np.array(todo)))))
            rho = float(np.nanmedian([self._rho[int(i)] for i in probe]))
        return Resolution(
            float(np.median(delta)) if len(front) else np.nan,
            rho,
            self.inputs,
            self.confidence,
            self.delta_span,
            self.rho_span,
            self.rho_method,
            len(front),
        )


def tolerance(epsilon, values: np.ndarray, resolution: Resolution | None = None) -> np.ndarray:
    """(ε_δ, ε_ρ) in the units of `values` (n, 2): a number ε is that share of each objective's
    measured range; `auto`, the resolution's."""
    if epsilon == AUTO:
        if resolution is None:
            raise ValueError("epsilon=auto needs the measurement's resolution")
        return resolution.tolerance()
    return epsilon * scale(values)


def certifiable(eps: np.ndarray, resolution: Resolution | None) -> bool | None:
    """Whether the tolerance `eps` (ε_δ, ε_ρ) is at least the resolution on each objective whose
    resolution is known: below it, whether an unmeasured θ beats the front by ε is decided by the
    inputs' sampling noise, which no estimate from the measured configurations can foresee (docs/
    readings.md). None: no resolution known."""
    if resolution is None:
        return None
    floor = resolution.tolerance()
    known = np.isfinite(floor)
    if not known.any():
        return None
    return bool((np.asarray(eps, float)[known] >= floor[known] * (1 - 1e-9)).all())


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
    if summary.get("epsilon_setting") != AUTO or summary.get("epsilon_delta") is None:  # None: not read yet
        return None
    return np.array([summary["epsilon_delta"], summary["epsilon_rho"]], dtype=float)
