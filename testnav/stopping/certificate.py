"""When may I stop testing? A stopping certificate for every search (docs/tomonav.md).

After each batch of new configurations (a checkpoint), p_complete estimates the probability
that the front P* is already complete: that no unmeasured θ is non-dominated by the measured
front. (P* is complete exactly when every unmeasured θ is dominated by a measured one: a chain
of dominating configurations ends on P*, so an unmeasured θ escapes the measured front only if
some member of P* is still unmeasured.) Two readings of the number of members still missing:

* `fresh`, the members of the measured front first measured since the previous checkpoint.
  A search that just found some will likely find as many again (a Good–Turing reading of
  its own discovery rate), so while fresh > 0, p_complete = exp(−fresh) ≤ 0.37.
* Once a window found none, `missing`: a conformally calibrated forest (Surrogate, kind
  `forest`, with its out-of-bag scores) is fitted to the measured points, each unmeasured
  θ's predictive draws μ + σ·e give its chance p_θ of escaping the front, and Σ p_θ is the
  surrogate's expected number of members still unmeasured. That sum is only as good as the
  surrogate: on smooth tables it overstates a hundredfold (wide bands over thousands of θ),
  on noisy ones it cannot see the noise spikes that make up the last members. So it is
  rescaled by the surrogate's own record in this run: after each fit, the configurations the
  search measures next are scored by that fit (their p_θ summed: the members it expected
  there) and the members really found among them are counted; missing = Σ p_θ × (found + 1)
  / (expected + 1) over all such windows so far (observed over expected, add-one smoothed:
  1 until there is a record). p_complete = exp(−missing / (share · |measured front|)): the
  calibrated shortfall as a share of the front. A front that has settled (the run has measured
  QUIET × as many configurations as when the front's newest member was measured) is allowed
  QUIET_RELAX × that share: a search whose discoveries have stopped for that long has found
  its last member in most runs (docs/tomonav.md).

Above REUSE_ABOVE configurations (the lattices where TomoNav ranks a pool; those of both
papers keep the rule above), checkpoints come DENSE_GROWTH rather than GROWTH apart, and cost
almost nothing between fits:
* `fresh` counts the front members first measured among the last max(every, (1 − 1/GROWTH)·u)
  of the u configurations measured: the window of the sparser schedule, so a stop needs the
  same quiet spell, but is noticed sooner;
* the surrogate is fitted once per quiet spell. While no window finds a member the measured
  front is unchanged, so that fit's p_θ still hold for the θ still unmeasured and `missing` is
  their sum; what the quiet windows measured enters through the record instead of a refit.
  Refits were most of the certificate's cost there (docs/tomonav.md).

It depends only on the proposals and their values, so the same numbers come out whether a
search feeds it batch by batch (CertifiedOracle, replay and live) or it is computed from a
finished run's proposals (the vectorised engine, which never calls the oracle per batch).
`stop_at` ends the run at the first checkpoint where p_complete ≥ stop_at. The surrogate is
fitted only where fresh = 0, so the certificate costs little while the search is still finding.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace

import numpy as np

from ..errors import UserError
from ..core.lattice import Lattice
from ..core.oracle import Oracle
from ..core.pareto import nondominated_mask
from .epsilon import AUTO, Resolution, eps_dominated, tolerance
from .pool import neighbours, random_configurations
from .level_surrogate import Surrogate

OBJECTIVES = ("delta", "rho")
# SHARE and the add-one calibration chosen on generated tables of every size of the scaling
# study (4⁴ to 6⁸) and on mnist5k_c6, seeds 7–9 only (docs/tomonav.md), and checked on the
# held-out seeds 100–104 (results/tables/scale.md)
SHARE = 0.5  # stop at 0.95 ⇔ calibrated missing ≤ 0.026 × |measured front| (and fresh = 0)
EVERY_SHARE = 20  # by default a checkpoint every 1/EVERY_SHARE of Θ new configurations (5 %)
EVERY_CAP = 2_000  # the default checkpoint spacing never exceeds this (it is 5 % of Θ below 40,000)
SAMPLE_ABOVE = 20_000  # more unmeasured θ than this: estimate the sum from a sample (Certificate.missing)
SAMPLE = 5_000  # θ drawn uniformly from the unmeasured ones, beyond the front's neighbours
MAX_SAMPLES = 1_000  # on large lattices each tree bootstraps at most this many measured points
TREES = 30  # the forest's trees: its fit is most of a checkpoint's cost
GROWTH = 1.25  # checkpoints at least this factor apart (Certificate.after)
LARGE_TREES = 30  # and the forest has at most this many trees (a checkpoint costs the same on any Θ)
# above this many configurations: checkpoints DENSE_GROWTH apart (or `every`, if further), fresh
# over a trailing window, one fit per quiet spell (module docstring); chosen on TomoNav's runs
# with seeds 7–9 (docs/tomonav.md)
REUSE_ABOVE = 2_000
DENSE_GROWTH = 1.10
# once the run has measured QUIET × as many configurations as when its front's newest member was
# measured, the tolerance is QUIET_RELAX × the usual one; chosen on TomoNav's runs with seeds 7–9,
# read off their checkpoints (docs/tomonav.md, "A settled front")
QUIET = 1.7
QUIET_RELAX = 2.0


STOP_ON = ("auto", "complete", "good")
# p_good once a window found no ε-improvement: exp(−missing_ε / (GOOD_SHARE · |front| · r)), r = (u / u_ε)^
# GOOD_RELAX_POWER once the run has measured GOOD_QUIET × as many configurations (u) as when its newest
# ε-improvement was measured (u_ε), else 1 (module docstring; chosen on generated tables only by
# scripts/stopping_study.py, results/tables/stopping_study.md)
GOOD_SHARE = 0.25
GOOD_QUIET = 1.7
GOOD_RELAX_POWER = 2.0
# stopping on p_good, checkpoints are at most this many new configurations apart (EVERY_CAP for p_complete)
GOOD_EVERY_CAP = 500


@dataclass(frozen=True)
class CertificateConfig:
    """The certificate's settings, as conf/settings/certificate.yaml holds them (the
    single source of their defaults; tests/test_contracts.py holds these to it)."""

    stop_at: float | None = None  # end the run once the chosen certificate reaches this; None: never
    stop_on: str = "auto"  # complete (p_complete) | good (p_good) | auto: good live, complete replaying a table
    # p_good's tolerance: a share of each objective's measured range, or "auto": the measurement's
    # resolution (an accuracy's interval half-width at the data set's N; epsilon.Resolution)
    epsilon: float | str = 0.01
    every: int | None = None  # new configurations between checkpoints; None: by the lattice's size
    share: float = SHARE  # p_complete's tolerance: the calibrated shortfall as a share of the front

    def __post_init__(self):
        if self.stop_at is not None and (isinstance(self.stop_at, bool) or not 0 < self.stop_at <= 1):
            raise UserError(f"certificate.stop_at={self.stop_at}: a probability in (0, 1], or null to never stop early")
        if self.stop_on not in STOP_ON:
            raise UserError(f"certificate.stop_on={self.stop_on} (valid: {', '.join(STOP_ON)})")
        if self.epsilon != AUTO and (
            isinstance(self.epsilon, (bool, str))
            or not isinstance(self.epsilon, (int, float))
            or not 0 <= self.epsilon < 1
        ):
            raise UserError(
                f"certificate.epsilon={self.epsilon}: a share of each objective's range in [0, 1), or auto "
                "(the resolution of an accuracy measured on the data set's N inputs)"
            )
        if self.every is not None and (isinstance(self.every, bool) or int(self.every) != self.every or self.every < 1):
            raise UserError(f"certificate.every={self.every}: a whole number of configurations ≥ 1, or null (by size)")
        if isinstance(self.share, bool) or not self.share > 0:
            raise UserError(f"certificate.share={self.share}: must be > 0")

    def rule(self, live: bool) -> str:
        """The certificate that stops the run: `stop_on`, where `auto` is `good` on a live run
        (a practitioner's model, where every configuration costs) and `complete` replaying a
        table (the exact front, as the papers compare searches)."""
        return ("good" if live else "complete") if self.stop_on == "auto" else self.stop_on

    def for_run(self, live: bool) -> "CertificateConfig":
        """These settings with `stop_on` resolved for a live run or a replay."""
        return replace(self, stop_on=self.rule(live))

    @classmethod
    def from_node(cls, node) -> "CertificateConfig":
        """From a `certificate:` node (a DictConfig or a dict); an unknown key is refused."""
        items = dict(node.items()) if node is not None else {}
        valid = [f.name for f in fields(cls)]
        for key in items:
            if key not in valid:
                raise UserError(f"certificate.{key}: no such setting (valid: {', '.join(valid)})")
        return cls(**items)


@dataclass(frozen=True)
class Checkpoint:
    """What the certificate read at one checkpoint (one is recorded per checkpoint)."""

    proposals: int  # proposals made so far (b)
    unique: int  # configurations measured so far (u)
    remaining: int  # configurations not measured (θ = 0 aside): at most this many can be missing
    p_complete: float
    p_good: float
    fresh: int  # members of the measured front first measured in the window before this checkpoint
    fresh_good: int  # of those, the ones that improve on the front before the window by more than ε
    front: int  # |measured front| (0 where too few points are measured, or Θ is exhausted)
    missing: float  # calibrated expected members still unmeasured; NaN: not fitted (fresh > 0); inf: too few points
    missing_good: float  # calibrated expected ε-improvements still unmeasured (NaN, inf: as `missing`)
    settled: bool  # the front had settled (QUIET): the tolerance QUIET_RELAX × wider
    improved: int  # u when the newest ε-improvement was measured (0: none yet)

    def p(self, rule: str) -> float:
        """The certificate `rule` (complete | good) names."""
        return self.p_good if rule == "good" else self.p_complete


def default_every(size: int, rule: str = "complete") -> int:
    """Checkpoint spacing when `every` is not set: 5 % of Θ (65 on 6⁴), between 10 and EVERY_CAP
    (GOOD_EVERY_CAP stopping on p_good: an ε-front settles well before 40,000 configurations).
    The window in which the last front member is found never counts as quiet, so a stop comes at
    least one window after full recall; 2.5 % was tried too (closer stops on the training tables,
    later ones on held-out tables: docs/notes/2026-12-05-tomonav-history.md)."""
    return max(10, min(-(-size // EVERY_SHARE), GOOD_EVERY_CAP if rule == "good" else EVERY_CAP))


def good_probability(
    fresh_good: int, missing_good: float, front: int, remaining: int, unique: int, improved: int, constants=None
) -> float:
    """p_good from a checkpoint's readings (module docstring): 1 with nothing left unmeasured;
    exp(−fresh_ε) while the last window found ε-improvements; else the calibrated missing_ε as a
    share of the front, widened by (u / u_ε)^GOOD_RELAX_POWER once the run has measured GOOD_QUIET ×
    as many configurations as when its newest ε-improvement was (u_ε). Both readings count at most
    `remaining` improvements. `constants`: (GOOD_SHARE, GOOD_QUIET, GOOD_RELAX_POWER) to read with
    instead (the stopping study's grid)."""
    share, quiet, power = constants or (GOOD_SHARE, GOOD_QUIET, GOOD_RELAX_POWER)
    if remaining == 0:
        return 1.0
    if fresh_good:
        return float(np.exp(-min(fresh_good, remaining)))
    if not np.isfinite(missing_good) or front == 0:
        return 0.0
    held = unique / max(improved, 1)  # the ε-front's age against the run's
    relax = held**power if held >= quiet else 1.0
    return float(np.exp(-min(missing_good, remaining) / (share * front * relax)))


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


class Certificate:
    """The certificate of one run: feed it the run's chunks (`split`, `feed`) or its finished
    proposals (`finish`); `records` holds one Checkpoint per checkpoint, `stopped` the proposal
    count at which it ended the run (None: it did not)."""

    def __init__(
        self,
        lattice: Lattice,
        config: CertificateConfig | None = None,
        seed: int = 0,
        *,
        growth: float | None = None,
        dense: bool | None = None,
        n_estimators: int = TREES,
        samples: int = 200,
        min_points: int = 10,
        resolution: Resolution | None = None,
    ):
        """`dense`: the schedule and fit reuse of lattices above REUSE_ABOVE (None: by size);
        `growth` (None: by the schedule) spaces the checkpoints beyond `config.every`;
        `resolution`: what `epsilon=auto` reads (required then)."""
        self.config = config if config is not None else CertificateConfig()
        if self.config.epsilon == AUTO and resolution is None:
            raise UserError(
                "certificate.epsilon=auto: the number of inputs behind each accuracy is not known here; "
                "give a number (e.g. certificate.epsilon=0.01)"
            )
        self.resolution = resolution if self.config.epsilon == AUTO else None
        self.stop_on = self.config.rule(live=False)  # `auto` unresolved (no run path given): complete
        self.lattice, self.seed = lattice, int(seed)
        self.dense = lattice.size > REUSE_ABOVE if dense is None else bool(dense)
        self.every = int(self.config.every) if self.config.every else default_every(lattice.size, self.stop_on)
        self.n_estimators, self.samples, self.min_points = int(n_estimators), int(samples), int(min_points)
        self.growth = float(growth) if growth else DENSE_GROWTH if self.dense else GROWTH
        self._start()

    @property
    def stop_at(self) -> float | None:
        return self.config.stop_at

    @property
    def share(self) -> float:
        return self.config.share

    def _start(self) -> None:
        """The state of a run not yet begun: nothing measured, no checkpoint."""
        size = self.lattice.size
        self.values = np.full((size, 2), np.nan)
        self.seen = np.zeros(size, bool)
        self.proposals: list[np.ndarray] = []
        self.b = self.u = 0
        self.next_u = self.every
        self.records: list[Checkpoint] = []
        self._new: list[np.ndarray] = []  # configurations first measured since the last checkpoint
        # how many configurations were measured once each θ had been (its chunk's end): the age of
        # the measured front (QUIET) and, dense, the trailing window; 4 bytes per θ wherever that
        # count fits, as it does on any Θ whose record fits in memory
        self.first = np.zeros(size, np.int32 if size < 2**31 else np.int64)
        self._reuse: tuple | None = None  # dense: the quiet spell's fit and its p_θ (missing)
        # the surrogate's record (module docstring): the fit of the last checkpoint, if it was
        # quiet, and over the windows after such fits, the members expected and found there
        self._fit: tuple | None = None
        self.expected = self.found = 0.0
        # the same for p_good: its last fit (model, front, ε, u), its quiet spell's reuse, its record
        self._fit_good: tuple | None = None
        self._reuse_good: tuple | None = None
        self.expected_good = self.found_good = 0.0
        self._here: list | None = None  # this checkpoint's fit and draws, shared by both certificates
        self._u_last = 0  # u at the last checkpoint
        self._improved = 0  # u when the newest ε-improvement was measured
        self.stopped: int | None = None
        self.seconds = 0.0  # spent estimating (the cost of the certificate)

    def estimate(self) -> Checkpoint:
        """The checkpoint now: p_complete and p_good with what they were read from."""
        new = np.concatenate(self._new) if self._new else np.zeros(0, np.int64)
        self._new = []
        fit, self._fit = self._fit, None
        fit_good, self._fit_good = self._fit_good, None
        seen = np.flatnonzero(self.seen)
        measured = seen[seen != 0]
        k = self.lattice.size - len(seen) - (not self.seen[0])
        at = dict(proposals=self.b, unique=self.u, remaining=k)
        if k == 0:  # Θ exhausted: certain
            return self._plain(at, 1.0, 0, 0.0)
        if len(measured) < self.min_points:
            return self._plain(at, 0.0, len(new), np.inf)
        pts = self.values[measured]
        on_front = nondominated_mask(pts[:, 0], pts[:, 1])
        members = measured[on_front]
        front = int(on_front.sum())
        try:
            complete = self._complete(new, fit, members, front, k)
            fresh_good, missing_good = self._good(measured, members, fit_good, k)
        finally:
            self._here = None  # this checkpoint's fit and draws: not kept past it
        self._u_last = self.u
        p_good = good_probability(fresh_good, missing_good, front, k, self.u, self._improved)
        good = dict(p_good=p_good, fresh_good=fresh_good, missing_good=missing_good, improved=self._improved)
        return Checkpoint(**at, **complete, **good)

    def _plain(self, at: dict, p: float, fresh: int, missing: float) -> Checkpoint:
        """A checkpoint read without a front: Θ exhausted (p = 1) or too few points measured (p = 0)."""
        return Checkpoint(
            **at,
            p_complete=p,
            p_good=p,
            fresh=fresh,
            fresh_good=fresh,
            front=0,
            missing=missing,
            missing_good=missing,
            settled=False,
            improved=self._improved,
        )

    def _complete(self, new, fit, members, front: int, k: int) -> dict:
        """p_complete: exp(−fresh) while the last window found front members, else
        exp(−missing / (share · |front|)), missing calibrated by the surrogate's record
        (module docstring); both count at most the k configurations still unmeasured."""
        found = int(np.isin(members, new).sum())  # in the window since the last checkpoint
        if found:
            self._reuse = None  # the front changed: the next quiet checkpoint fits anew
        fresh = found
        if self.dense:  # over the trailing window, as long as the sparse schedule's window here
            window = max(self.every, (1 - 1 / GROWTH) * self.u)
            fresh = int((self.first[members] > self.u - window).sum())
        if fit is not None:  # the window after a fit: what it expected there against what was found
            new = new[new != 0]
            self.expected += float(self._escape(*fit, new).sum()) if len(new) else 0.0
            self.found += found
        if fresh:  # the surrogate could only lower p_complete further
            return dict(
                p_complete=float(np.exp(-min(fresh, k))), fresh=fresh, front=front, missing=np.nan, settled=False
            )
        missing = min(self.missing() * (self.found + 1) / (self.expected + 1), k)
        # settled: u ≥ QUIET × u when the front's newest member was measured (the front unchanged
        # over the last 1 − 1/QUIET of the run): QUIET_RELAX × the tolerance
        settled = bool(self.u >= QUIET * self.first[members].max())
        p = float(np.exp(-missing / (self.share * front * (QUIET_RELAX if settled else 1))))
        return dict(p_complete=p, fresh=0, front=front, missing=missing, settled=settled)

    def _good(self, measured, members, fit, k: int) -> tuple[int, float]:
        """fresh_ε, the members of the measured front first measured in the window that improve
        on the front before it by more than ε, and (where fresh_ε = 0) missing_ε, the surrogate's
        expected ε-improvements still unmeasured, calibrated by its own record and at most k."""
        eps = self.tolerance()
        start = self.u - max(self.every, (1 - 1 / GROWTH) * self.u) if self.dense else self._u_last
        newer = members[self.first[members] > start]
        older = measured[self.first[measured] <= start]
        before = self.values[older][nondominated_mask(*self.values[older].T)] if len(older) else np.zeros((0, 2))
        better = newer[~eps_dominated(self.values[newer], before, eps)]
        fresh = len(better)
        if fresh:
            self._improved = max(self._improved, int(self.first[better].max()))
        if fit is not None:  # the window after a fit: the ε-improvements it expected there, and found
            model, front, e, u_fit = fit
            window = measured[self.first[measured] > u_fit]
            if len(window):
                self.expected_good += float(self._escape(model, front, window, e).sum())
                self.found_good += int((~eps_dominated(self.values[window], front, e)).sum())
        if fresh:  # the front moved by more than ε: the surrogate's record starts again, on the new front
            self._reuse_good = None
            self.expected_good = self.found_good = 0.0
            return fresh, np.nan
        raw = self._missing_good(eps)
        return 0, min(raw * (self.found_good + 1) / (self.expected_good + 1), k)

    def tolerance(self) -> np.ndarray:
        """(ε_δ, ε_ρ) now, in the units of the values fed: `epsilon` of each objective's measured
        range, or with `auto` the resolution's (epsilon.Resolution)."""
        return tolerance(self.config.epsilon, self.values[self.seen], self.resolution)

    def missing(self) -> float:
        """The surrogate's expected number of front members still unmeasured, Σ p_θ over the
        unmeasured θ, before calibration (its fit and front are kept for the next window's
        record). Beyond SAMPLE_ABOVE unmeasured θ the sum is estimated:
        exactly over the unit-step neighbours of the measured front (where the escapes are),
        plus SAMPLE uniform draws from the rest weighted up to the rest's size (an unbiased
        estimate of its part), so a checkpoint costs the same on any lattice."""
        seen = np.flatnonzero(self.seen)
        unmeasured = self.lattice.size - len(seen) - (not self.seen[0])
        measured = seen[seen != 0]
        if unmeasured == 0:
            return 0.0
        if len(measured) < self.min_points:
            return np.inf
        if self._reuse is not None:  # dense, the front unchanged since this spell's fit
            model, front, cand, p, exact = self._reuse
            self._fit = (model, front)
            return self._reused_sum(cand, p, exact, unmeasured)
        model, front, cand, w, exact = self._fitted()
        self._fit = (model, front)
        p = escape_probability(self._draws(), front)
        if self.dense:  # for the spell's later checkpoints: the first `exact` of cand are summed exactly
            self._reuse = (model, front, cand, p, exact)
        return float((w * p).sum())

    def _missing_good(self, eps: np.ndarray) -> float:
        """Σ over the unmeasured θ of the chance that θ improves the measured front by more than
        ε (its draws not ε-dominated), as `missing` sums the chance of escaping it: the same fit,
        candidates and draws at this checkpoint; dense, reused while no window finds an
        ε-improvement (its front and ε, older, can only overstate)."""
        seen = np.flatnonzero(self.seen)
        unmeasured = self.lattice.size - len(seen) - (not self.seen[0])
        if self._reuse_good is not None:
            model, front, e, cand, p, exact = self._reuse_good
            self._fit_good = (model, front, e, self.u)
            return self._reused_sum(cand, p, exact, unmeasured)
        model, front, cand, w, exact = self._fitted()
        self._fit_good = (model, front, eps, self.u)
        p = 1.0 - eps_dominated(self._draws(), front, eps).mean(axis=0)
        if self.dense:
            self._reuse_good = (model, front, eps, cand, p, exact)
        return float((w * p).sum())

    def _reused_sum(self, cand, p, exact: int, unmeasured: int) -> float:
        """A quiet spell's p_θ summed over its candidates still unmeasured: the first `exact` of
        them exactly, the sampled rest weighted up to the rest of the unmeasured θ."""
        still = ~self.seen[cand]
        k = int(still[:exact].sum())
        p = p[still]
        rest = p[k:]
        return float(p[:k].sum() + (rest.sum() * (unmeasured - k) / len(rest) if len(rest) else 0.0))

    def _fitted(self) -> tuple:
        """This checkpoint's surrogate, fitted once for both certificates: (model, the measured
        front's points, the candidates, their weights, how many of them are summed exactly).
        Beyond SAMPLE_ABOVE unmeasured θ the candidates are the measured front's unit-step
        neighbours plus SAMPLE uniform draws from the rest, weighted up to the rest's size."""
        seen = np.flatnonzero(self.seen)
        if self._here is not None and self._here[0] == len(seen):
            return self._here[1]
        unmeasured = self.lattice.size - len(seen) - (not self.seen[0])
        measured = seen[seen != 0]
        large = unmeasured > SAMPLE_ABOVE
        model = Surrogate(
            self.lattice,
            "forest",
            n_estimators=min(self.n_estimators, LARGE_TREES) if large else self.n_estimators,
            seed=self.seed,
            max_samples=MAX_SAMPLES if large else None,
        )
        model.fit(seen, self.values[seen])
        pts = self.values[measured]
        on_front = nondominated_mask(pts[:, 0], pts[:, 1])
        front = pts[on_front]
        if not large:
            cand = np.flatnonzero(~self.seen)
            cand = cand[cand != 0]  # θ = 0 is not on P*
            w, exact = np.ones(len(cand)), len(cand)
        else:
            rng = np.random.default_rng([self.seed, len(seen)])
            near = neighbours(self.lattice, measured[on_front])
            near = near[~self.seen[near] & (near != 0)]
            rest = random_configurations(self.lattice, SAMPLE, rng, exclude=np.concatenate([seen, near, [0]]))
            cand = np.concatenate([near, rest])
            w = np.r_[np.ones(len(near)), np.full(len(rest), (unmeasured - len(near)) / max(len(rest), 1))]
            exact = len(near)
        self._here = [len(seen), (model, front, cand, w, exact), None]
        return self._here[1]

    def _draws(self) -> np.ndarray:
        """The predictive draws of this checkpoint's candidates under its fit (`_fitted`), made once."""
        model, _, cand, _, _ = self._fitted()
        if self._here[2] is None:
            mean, sd = model.predict(cand)
            self._here[2] = model.draws(cand, mean=mean, sd=sd, samples=self.samples)  # evenly spaced scores
        return self._here[2]

    def _escape(self, model: Surrogate, front: np.ndarray, cand: np.ndarray, eps=None) -> np.ndarray:
        """p_θ for each θ of `cand` (with `eps`: its chance of improving `front` by more than ε)."""
        mean, sd = model.predict(cand)
        draws = model.draws(cand, mean=mean, sd=sd, samples=self.samples)  # evenly spaced scores: same fit, same draws
        return escape_probability(draws, front) if eps is None else 1.0 - eps_dominated(draws, front, eps).mean(axis=0)

    def split(self, indices: np.ndarray) -> list[np.ndarray]:
        """`indices` cut after each proposal at which a checkpoint falls (so a live run never
        evaluates past the point where it stops)."""
        idx = np.asarray(indices, dtype=np.int64).ravel()
        _, first = np.unique(idx, return_index=True)
        new = np.zeros(len(idx), bool)
        new[first] = True
        new &= ~self.seen[idx]
        u = self.u + np.cumsum(new)
        marks, t = [], self.next_u
        while len(u) and t <= u[-1]:
            marks.append(t)
            t = self.after(t)
        if len(u) and u[-1] == self.lattice.size:
            marks.append(self.lattice.size)  # Θ exhausted: certain, whatever the schedule
        cuts = sorted({int(np.searchsorted(u, t)) + 1 for t in marks})
        return [c for c in np.split(idx, cuts) if len(c)]

    def after(self, mark: int) -> int:
        """The checkpoint after `mark`: `every` new configurations on, or `growth` × mark if
        further, so a run of u configurations has O(log u) checkpoints, each stop comes within
        a factor `growth` of where the statistic first allowed it."""
        return max(mark + self.every, int(np.ceil(mark * self.growth)))

    def feed(self, chunk: np.ndarray, values: np.ndarray) -> bool:
        """Record a chunk (from split) and its (δ, ρ); True if the run should stop here."""
        chunk = np.asarray(chunk, dtype=np.int64)
        new = np.unique(chunk[~self.seen[chunk]])
        self._new.append(new)
        self.values[chunk] = values
        self.seen[chunk] = True
        self.proposals.append(chunk)
        self.b += len(chunk)
        self.u = int(self.seen.sum())
        self.first[new] = self.u
        exhausted = self.u == self.lattice.size and (not self.records or self.records[-1].p_complete < 1)
        if self.u >= self.next_u or exhausted:
            t0 = time.perf_counter()
            record = self.estimate()
            self.seconds += time.perf_counter() - t0
            self.records.append(record)
            while self.next_u <= self.u:
                self.next_u = self.after(self.next_u)
            if self.stop_at is not None and record.p(self.stop_on) >= self.stop_at:
                self.stopped = self.b
                return True
        return False

    def column(self, name: str = "p_complete") -> np.ndarray:
        """A Checkpoint field after each proposal fed (0 before the first checkpoint)."""
        out = np.zeros(self.b)
        for r in self.records:
            out[r.proposals - 1 :] = getattr(r, name)
        return out

    def finish(self, proposals: np.ndarray, evaluate) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The run's proposals (cut at the stop, if any) and the certificate after each of them
        ({"p_complete": …, "p_good": …}). Proposals the certificate has not seen (a search that read the table
        up front) are fed now, through the same checkpoints; `evaluate(indices)` gives their (δ, ρ)."""
        p = np.asarray(proposals, dtype=np.int64)
        fed = np.concatenate(self.proposals) if self.proposals else np.zeros(0, np.int64)
        if len(fed) > len(p) or not np.array_equal(fed, p[: len(fed)]):  # evaluated out of order: start over
            self._start()
            fed = fed[:0]
        if self.stopped is None:
            for chunk in self.split(p[len(fed) :]):
                if self.feed(chunk, evaluate(chunk)):
                    break
        return p[: self.b], {name: self.column(name) for name in ("p_complete", "p_good")}


class CertifiedOracle(Oracle):
    """Wraps an oracle: every evaluation passes through the certificate, batch by batch. Once
    p_complete ≥ stop_at the oracle is `stopped`: nothing more is evaluated (the values of a
    request's remaining configurations are NaN) and the search returns. Searches cannot tell it
    from the oracle otherwise."""

    def __init__(self, oracle, certificate: Certificate):
        self.inner, self.certificate, self.lattice = oracle, certificate, oracle.lattice

    @property
    def stopped(self) -> bool:
        return self.certificate.stopped is not None

    def table(self, names=OBJECTIVES) -> np.ndarray:
        return self.inner.table(names)

    def evaluate(self, indices, names=OBJECTIVES) -> np.ndarray:
        names = tuple(names)
        idx = np.asarray(indices, dtype=np.int64).ravel()
        out = np.full((len(idx), len(names)), np.nan)
        at = 0
        for chunk in self.certificate.split(idx):
            if self.stopped:
                break
            values = self.inner.evaluate(chunk, OBJECTIVES)
            out[at : at + len(chunk)] = values if names == OBJECTIVES else self.inner.evaluate(chunk, names)
            at += len(chunk)
            self.certificate.feed(chunk, values)
        return out


def run_certified(search, oracle: CertifiedOracle, budget: int, seed: int, evaluate) -> tuple[np.ndarray, dict]:
    """search.run through a CertifiedOracle: (proposals, {"p_complete": after each proposal}), cut at the stop."""
    proposals = search.run(oracle, budget, seed)
    return oracle.certificate.finish(proposals, evaluate)


def summary_fields(certificate: Certificate, columns: dict) -> dict:
    """The certificate's summary.json fields. With epsilon=auto, `epsilon` is the number the run
    used (the accuracy half-width), and `epsilon_setting`, `epsilon_inputs`, `epsilon_confidence`
    say where it came from; `epsilon_delta`, `epsilon_rho` are the tolerances in the units of the
    trace's `delta` and `rho` at the run's last reading (a numeric ε adds none of these)."""
    last = {name: float(column[-1]) if len(column) else 0.0 for name, column in columns.items()}
    out = {
        "p_complete": last["p_complete"],
        "p_good": last["p_good"],
        "stop_at": certificate.stop_at,
        "stop_on": certificate.stop_on,
        "epsilon": certificate.config.epsilon,
        "stopped_at": certificate.stopped,
        "certificate_every": certificate.every,
        "certificate_seconds": round(certificate.seconds, 4),
    }
    res = certificate.resolution
    if res is not None:
        eps_delta, eps_rho = certificate.tolerance()
        out.update(
            epsilon=res.half_width,
            epsilon_setting=AUTO,
            epsilon_inputs=res.inputs,
            epsilon_confidence=res.confidence,
            epsilon_delta=float(eps_delta),
            epsilon_rho=float(eps_rho),
        )
    return out


def tolerance_words(summary: dict) -> str:
    """p_good's tolerance in words, from a summary: "1% of an objective's range", or at epsilon=auto
    "0.049 of accuracy (the 95% interval half-width at N = 400) or 4.9% of ρ's range"."""
    eps = float(summary.get("epsilon") or 0.01)
    if summary.get("epsilon_setting") == AUTO:
        conf = float(summary.get("epsilon_confidence") or 0.95)
        return (
            f"{eps:.3f} of accuracy (the {conf:.0%} interval half-width at N = {int(summary['epsilon_inputs']):,}) "
            f"or {eps:.1%} of ρ's range"
        )
    return f"{eps:.0%} of an objective's range" if eps >= 0.01 else f"{eps:g} of an objective's range"


def verdict(summary: dict) -> str:
    """The certificate's verdict on a run, in one sentence (from its summary.json fields)."""
    u, size = summary["unique"], summary.get("space_size")
    of = f" of {size:,}" if size else ""
    good, complete = summary["p_good"], summary["p_complete"]
    if size and u >= size:
        return f"Certificate: every configuration was measured ({u:,}), so the front is exact."
    readings = (
        f"p_good = {good:.2f} that no unmeasured configuration improves the front by more than "
        f"{tolerance_words(summary)}, p_complete = {complete:.2f} that it is exact"
    )
    if summary["stopped_at"] is not None:
        what = "within ε of complete" if summary["stop_on"] == "good" else "complete"
        return f"Certificate: stopped after {u:,}{of} configurations, the front {what} ({readings})."
    if summary["stop_at"] is not None:
        return f"Certificate: not stopped after {u:,}{of} configurations, {summary['stop_on']} below {summary['stop_at']} ({readings})."
    return f"Certificate after {u:,}{of} configurations: {readings}."
