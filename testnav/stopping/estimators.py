"""The certificate's two rules, one estimator each (testnav/stopping/certificate.py's docstring):
p_complete (CompleteEstimator: no unmeasured θ escapes the measured front) and p_good
(GoodEstimator: none improves on it by more than ε). Each owns its state across checkpoints, as
pymoo's termination criteria each own `_update`: the fit whose window it scores next (its record
of members expected against members found there) and, dense, its quiet spell's p_θ (reuse). At a
checkpoint the certificate hands both rules the MeasuredSet (testnav/stopping/measured.py) and one
CheckpointFit, so the surrogate is fitted at most once for the two; each returns its Reading.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.lattice import Lattice
from ..core.pareto import nondominated_mask
from .epsilon import eps_dominated
from .level_surrogate import Surrogate
from .measured import MeasuredSet
from .pool import neighbours, random_configurations
from .tuning import TUNED, Tuning


def escape_probability(draws: np.ndarray, front: np.ndarray) -> np.ndarray:
    """Per θ, the share of its draws (S, m, 2) that no point of `front` (f, 2) dominates."""
    return 1.0 - dominated_draws(draws, front).mean(axis=0)


def dominated_draws(draws: np.ndarray, front: np.ndarray) -> np.ndarray:
    """(S, m) bool: draw s of θ is dominated by a point of `front` (f, 2)."""
    order = np.argsort(front[:, 0])
    fd, fr = front[order, 0], front[order, 1]
    best = np.r_[np.maximum.accumulate(fr[::-1])[::-1], -np.inf]  # best ρ among δ_F ≥ fd[i]
    d, r = draws[..., 0], draws[..., 1]
    ge = best[np.searchsorted(fd, d, side="left")]  # best ρ with δ_F ≥ d
    out = ge > r
    # best ρ with δ_F > d is at most `ge`, so it can reach r only where ge == r: look it up there only
    tie = np.flatnonzero(ge == r)
    if len(tie):
        out.flat[tie] = best[np.searchsorted(fd, d.flat[tie], side="right")] >= r.flat[tie]
    return out


@dataclass(frozen=True)
class Reading:
    """One rule's reading at a checkpoint: its probability and what it was read from."""

    p: float  # p_complete or p_good
    # members of the measured front first measured in the window before this checkpoint (p_good:
    # those that improve on the front before the window by more than ε)
    fresh: int
    # calibrated expected members (p_good: ε-improvements) still unmeasured; NaN: not fitted (fresh > 0);
    # inf: too few points
    missing: float


@dataclass(frozen=True)
class CompleteReading(Reading):
    """p_complete's reading."""

    settled: bool  # the front had settled (Tuning.quiet): the tolerance Tuning.quiet_relax × wider


@dataclass(frozen=True)
class GoodReading(Reading):
    """p_good's reading."""

    improved: int  # u when the newest ε-improvement was measured (0: none yet)


@dataclass(frozen=True)
class Fitting:
    """How a checkpoint's surrogate is fitted and read, the same at every checkpoint of a run."""

    lattice: Lattice
    seed: int
    trees: int  # the forest's trees (at most tuning.trees where the sum is sampled)
    samples: int  # predictive draws per θ
    min_points: int  # measured θ (θ = 0 aside) below which no front is read
    # above tuning.reuse_above configurations: fresh is counted over the trailing window and the
    # surrogate is fitted once per quiet spell (certificate.py's docstring)
    dense: bool
    tuning: Tuning


class Fit(NamedTuple):
    """A rule's surrogate at one checkpoint, kept to score the window after it (the record)."""

    model: Surrogate
    front: np.ndarray  # the measured front's points then
    eps: np.ndarray | None  # the tolerance then (p_good; None for p_complete)
    u: int  # configurations measured then


class Spell(NamedTuple):
    """Dense: a quiet spell's fit and its p_θ over the candidates, reused while the front holds."""

    model: Surrogate
    front: np.ndarray
    eps: np.ndarray | None
    cand: np.ndarray  # the candidates: the first `exact` summed exactly, the rest a sample
    p: np.ndarray
    exact: int

    def sum(self, seen: np.ndarray, unmeasured: int) -> float:
        """p_θ summed over the candidates still unmeasured: the first `exact` of them exactly,
        the sampled rest weighted up to the rest of the unmeasured θ."""
        still = ~seen[self.cand]
        k = int(still[: self.exact].sum())
        p = self.p[still]
        rest = p[k:]
        return float(p[:k].sum() + (rest.sum() * (unmeasured - k) / len(rest) if len(rest) else 0.0))


class CheckpointFit:
    """This checkpoint's surrogate, fitted at most once for both rules and only if one asks,
    with its candidates and their predictive draws. Beyond sample_above unmeasured θ the candidates
    are the measured front's unit-step neighbours plus `sample` uniform draws from the rest,
    weighted up to the rest's size, so a checkpoint costs the same on any lattice."""

    def __init__(self, fitting: Fitting, measured: MeasuredSet):
        self.fitting, self.measured = fitting, measured
        self._fitted: tuple | None = None
        self._draws: np.ndarray | None = None

    def fitted(self) -> tuple:
        """(model, the measured front's points, the candidates, their weights, how many of them are
        summed exactly)."""
        if self._fitted is None:
            self._fitted = self._fit()
        return self._fitted

    def _fit(self) -> tuple:
        f, m, tuning = self.fitting, self.measured, self.fitting.tuning
        seen = np.flatnonzero(m.seen)
        large = m.remaining > tuning.sample_above
        model = Surrogate(
            f.lattice,
            "forest",
            n_estimators=min(f.trees, tuning.trees) if large else f.trees,
            seed=f.seed,
            max_samples=tuning.max_samples if large else None,
        )
        model.fit(seen, m.values[seen])
        front = m.values[m.members]
        if not large:
            cand = np.flatnonzero(~m.seen)
            cand = cand[cand != 0]  # θ = 0 is not on P*
            return model, front, cand, np.ones(len(cand)), len(cand)
        rng = np.random.default_rng([f.seed, len(seen)])
        near = neighbours(f.lattice, m.members)
        near = near[~m.seen[near] & (near != 0)]
        rest = random_configurations(f.lattice, tuning.sample, rng, exclude=np.concatenate([seen, near, [0]]))
        cand = np.concatenate([near, rest])
        w = np.r_[np.ones(len(near)), np.full(len(rest), (m.remaining - len(near)) / max(len(rest), 1))]
        return model, front, cand, w, len(near)

    def draws(self) -> np.ndarray:
        """The predictive draws of the candidates under this checkpoint's fit, made once."""
        if self._draws is None:
            model, _, cand, _, _ = self.fitted()
            mean, sd = model.predict(cand)
            self._draws = model.draws(cand, mean=mean, sd=sd, samples=self.fitting.samples)  # evenly spaced scores
        return self._draws


class Estimator(ABC):
    """One rule's estimate at each checkpoint (`update`): its Reading. It owns the last quiet
    checkpoint's fit (`fit`, scored on the window after it), the surrogate's record over such
    windows (`expected` members against `found`) and, dense, its quiet spell's reuse (`spell`)."""

    def __init__(self, fitting: Fitting):
        self.fitting = fitting
        self.fit: Fit | None = None
        self.spell: Spell | None = None
        self.expected = self.found = 0.0

    @property
    def tuning(self) -> Tuning:
        return self.fitting.tuning

    @abstractmethod
    def chance(self, draws: np.ndarray, front: np.ndarray, eps) -> np.ndarray:
        """Per θ, the share of its draws (S, m, 2) that count against `front` under this rule."""

    @abstractmethod
    def update(self, measured: MeasuredSet, shared: CheckpointFit, eps: np.ndarray) -> Reading:
        """This rule's reading at a checkpoint that reads a front; `eps`: the tolerance (ε_δ, ε_ρ) now."""

    @abstractmethod
    def plain(self, p: float, fresh: int, missing: float) -> Reading:
        """This rule's reading where no front is read: Θ exhausted (p = 1) or too few points
        measured (p = 0); the last fit has no window to score."""

    def take_fit(self) -> Fit | None:
        """The last checkpoint's fit, if it was quiet, handed over once (the window after it is now measured)."""
        fit, self.fit = self.fit, None
        return fit

    def scored(self, fit: Fit, cand: np.ndarray) -> np.ndarray:
        """p_θ of each θ of `cand` under the kept `fit` (same fit, same evenly spaced draws)."""
        mean, sd = fit.model.predict(cand)
        return self.chance(fit.model.draws(cand, mean=mean, sd=sd, samples=self.fitting.samples), fit.front, fit.eps)

    def missing(self, measured: MeasuredSet, shared: CheckpointFit, eps=None) -> float:
        """Σ p_θ over the unmeasured θ, before calibration (this checkpoint's fit is kept for the next
        window's record): 0 with none left, inf with too few points measured; dense, a quiet spell
        sums the p_θ of its first fit over the candidates still unmeasured (its front and ε, older,
        can only overstate)."""
        m = measured
        if m.remaining == 0:
            return 0.0
        if len(m.measured) < self.fitting.min_points:
            return np.inf
        if self.spell is not None:  # dense, the front unchanged since this spell's fit
            self.fit = Fit(self.spell.model, self.spell.front, self.spell.eps, m.u)
            return self.spell.sum(m.seen, m.remaining)
        model, front, cand, w, exact = shared.fitted()
        self.fit = Fit(model, front, eps, m.u)
        p = self.chance(shared.draws(), front, eps)
        if self.fitting.dense:  # for the spell's later checkpoints: the first `exact` of cand are summed exactly
            self.spell = Spell(model, front, eps, cand, p, exact)
        return float((w * p).sum())


class CompleteEstimator(Estimator):
    """p_complete: exp(−fresh) while the last window found front members, else
    exp(−missing / (share · |front|)), missing calibrated by the surrogate's record, the tolerance
    quiet_relax × wider once the front has settled; both count at most the configurations still
    unmeasured. `share`: CertificateConfig.share."""

    def __init__(self, fitting: Fitting, share: float):
        super().__init__(fitting)
        self.share = share

    def chance(self, draws, front, eps=None):
        return escape_probability(draws, front)

    def plain(self, p, fresh, missing):
        self.fit = None
        return CompleteReading(p, fresh, missing, settled=False)

    def update(self, measured, shared, eps=None):
        m, k = measured, measured.remaining
        fit = self.take_fit()
        found = int(np.isin(m.members, m.new).sum())  # in the window since the last checkpoint
        if found:
            self.spell = None  # the front changed: the next quiet checkpoint fits anew
        fresh = found
        if self.fitting.dense:  # over the trailing window, as long as the sparse schedule's window here
            fresh = int((m.first[m.members] > m.window).sum())
        if fit is not None:  # the window after a fit: what it expected there against what was found
            new = m.new[m.new != 0]
            self.expected += float(self.scored(fit, new).sum()) if len(new) else 0.0
            self.found += found
        if fresh:  # the surrogate could only lower p_complete further
            return CompleteReading(float(np.exp(-min(fresh, k))), fresh, np.nan, settled=False)
        missing = min(self.missing(m, shared) * (self.found + 1) / (self.expected + 1), k)
        # settled: u ≥ quiet × u when the front's newest member was measured (the front unchanged
        # over the last 1 − 1/quiet of the run): quiet_relax × the tolerance
        settled = bool(m.u >= self.tuning.quiet * m.first[m.members].max())
        p = float(np.exp(-missing / (self.share * m.front * (self.tuning.quiet_relax if settled else 1))))
        return CompleteReading(p, 0, missing, settled=settled)


class GoodEstimator(Estimator):
    """p_good: fresh_ε, the members of the measured front first measured in the window that improve
    on the front before it by more than ε, and (where fresh_ε = 0) missing_ε, the surrogate's
    expected ε-improvements still unmeasured, calibrated by its own record; read by `probability`.
    It also keeps `improved`, u when the newest ε-improvement was measured, and `u_last`, u at the
    last checkpoint that read a front (the window's start, sparse)."""

    def __init__(self, fitting: Fitting):
        super().__init__(fitting)
        self.improved = 0
        self.u_last = 0

    def chance(self, draws, front, eps):
        return 1.0 - eps_dominated(draws, front, eps).mean(axis=0)

    def plain(self, p, fresh, missing):
        self.fit = None
        return GoodReading(p, fresh, missing, improved=self.improved)

    def update(self, measured, shared, eps):
        m, k = measured, measured.remaining
        fit = self.take_fit()
        start = m.window if self.fitting.dense else self.u_last
        newer = m.members[m.first[m.members] > start]
        older = m.measured[m.first[m.measured] <= start]
        before = m.values[older][nondominated_mask(*m.values[older].T)] if len(older) else np.zeros((0, 2))
        better = newer[~eps_dominated(m.values[newer], before, eps)]
        fresh = len(better)
        if fresh:
            self.improved = max(self.improved, int(m.first[better].max()))
        if fit is not None:  # the window after a fit: the ε-improvements it expected there, and found
            since = m.measured[m.first[m.measured] > fit.u]
            if len(since):
                self.expected += float(self.scored(fit, since).sum())
                self.found += int((~eps_dominated(m.values[since], fit.front, fit.eps)).sum())
        if fresh:  # the front moved by more than ε: the surrogate's record starts again, on the new front
            self.spell = None
            self.expected = self.found = 0.0
            missing = np.nan
        else:
            missing = min(self.missing(m, shared, eps) * (self.found + 1) / (self.expected + 1), k)
        self.u_last = m.u
        p = self.probability(fresh, missing, m.front, k, m.u, self.improved, self.tuning)
        return GoodReading(p, fresh, missing, improved=self.improved)

    @staticmethod
    def probability(
        fresh_good: int,
        missing_good: float,
        front: int,
        remaining: int,
        unique: int,
        improved: int,
        tuning: Tuning = TUNED,
    ) -> float:
        """p_good from a checkpoint's readings: 1 with nothing left unmeasured; exp(−fresh_ε) while
        the last window found ε-improvements; else the calibrated missing_ε as a share (good_share)
        of the front, widened by (u / u_ε)^good_relax_power once the run has measured good_quiet × as
        many configurations as when its newest ε-improvement was (u_ε). Both readings count at most
        `remaining` improvements. `tuning`: other constants to read with (the stopping study's grid)."""
        if remaining == 0:
            return 1.0
        if fresh_good:
            return float(np.exp(-min(fresh_good, remaining)))
        if not np.isfinite(missing_good) or front == 0:
            return 0.0
        held = unique / max(improved, 1)  # the ε-front's age against the run's
        relax = held**tuning.good_relax_power if held >= tuning.good_quiet else 1.0
        return float(np.exp(-min(missing_good, remaining) / (tuning.good_share * front * relax)))
