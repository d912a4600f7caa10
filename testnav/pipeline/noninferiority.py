"""The regression gate as a non-inferiority test: did the new version lose more than `max_drop`?

Per configuration the two versions saw the same N inputs; b inputs were right before and wrong
after, c wrong before and right after, and the paired drop is δ = (b − c)/N (its truth: the
difference of the two discordant probabilities, p_b − p_c). Its bounds and tests are Tango's score
statistic for a difference of paired proportions (Tango 1998, Stat Med 17:891):

    Z(δ₀) = (b − c − N·δ₀) / sqrt(N·(2·p̃_c + δ₀·(1 − δ₀)))

with p̃_c the maximum-likelihood p_c under δ = δ₀ (a closed-form root); at δ₀ = 0 it is McNemar's
statistic (b − c)/sqrt(b + c). `drop_high` is the one-sided upper confidence bound (the largest δ₀
the score test at 1 − confidence does not reject); `beyond_p` the one-sided p-value of H0: δ ≤
max_drop. Unlike a Wald interval it is not 0 wide when no input flipped: an identical copy on N
inputs has the bound that N inputs can give.

The verdict (`decide`), over the K configurations compared:
* fail when Holm's step-down over the K one-sided tests of H0: δ ≤ max_drop rejects for one of them
  (a drop beyond max_drop is shown; the family-wise error of such a call stays below 1 − confidence);
* pass when every configuration is cleared, its upper bound ≤ max_drop: an intersection–union test,
  so no correction over K is needed to pass, and more configurations make a pass harder, not easier;
* otherwise undecided: the data cannot tell. With a warm start (pipeline/warm.py) configurations of
  its random sample that are not cleared count against its tolerance, beside those its bound allows
  among the predicted ones; every other configuration measured must be cleared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METHOD = "Tango's score bound on the paired drop"


def restricted_pc(b, c, n, delta):
    """p̃_c: the maximum-likelihood probability of 'wrong before, right after' when the drop is `delta`."""
    b, c, n, delta = (np.asarray(v, float) for v in (b, c, n, delta))
    B = -b - c + (2 * n - b + c) * delta
    C = -c * delta * (1 - delta)
    return (np.sqrt(np.maximum(B * B - 8 * n * C, 0.0)) - B) / (4 * n)


def score_z(b, c, n, delta):
    """Tango's score statistic Z(δ₀) (decreasing in δ₀)."""
    b, c, n, delta = (np.asarray(v, float) for v in (b, c, n, delta))
    var = n * (2 * restricted_pc(b, c, n, delta) + delta * (1 - delta))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (b - c - n * delta) / np.sqrt(var)
    return np.where(var > 0, z, np.where(b - c - n * delta >= 0, np.inf, -np.inf))


def beyond_p(b, c, n, max_drop: float):
    """The one-sided p-value of H0: δ ≤ max_drop against δ > max_drop (small: a drop beyond it is shown)."""
    from scipy.stats import norm

    return norm.sf(score_z(b, c, n, max_drop))


def drop_bound(b: int, c: int, n: int, confidence: float, upper: bool = True) -> float:
    """The one-sided bound at `confidence` on the drop δ: upper (the largest δ₀ with Z(δ₀) ≥ −z) or
    lower (the smallest δ₀ with Z(δ₀) ≤ z), z the normal quantile; a root of Z found by brentq."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    z, est = norm.ppf(confidence), (b - c) / n
    if upper:
        end, f = 1.0, lambda d: float(score_z(b, c, n, d)) + z  # noqa: E731
    else:
        end, f = -1.0, lambda d: float(score_z(b, c, n, d)) - z  # noqa: E731
    if f(end) * f(est) > 0 or est == end:
        return end
    return float(brentq(f, est, end, xtol=1e-10))


def drop_high(b, c, n: int, confidence: float) -> np.ndarray:
    """`drop_bound` (upper) per configuration: b, c arrays of flips over the same n inputs."""
    return np.array([drop_bound(int(x), int(y), n, confidence) for x, y in zip(b, c)], float)


@dataclass(frozen=True)
class Verdict:
    """The gate's verdict: `decision` (pass, fail, undecided); `worst`, `drop`, `bound`: the
    configuration the line names, its drop and its one-sided upper bound (a lower bound for a fail:
    the drop it is shown to exceed); `shown`: configurations shown to drop beyond max_drop (Holm);
    `uncleared`: configurations whose bound exceeds max_drop; `tolerated`: those of them the warm
    start's tolerance holds (sampled at random); `line`: the one line a CI log shows."""

    decision: str
    max_drop: float
    confidence: float
    compared: int
    worst: str
    drop: float
    bound: float
    shown: int
    uncleared: int
    tolerated: int
    line: str

    @property
    def failed(self) -> bool:
        return self.decision == "fail"

    @property
    def summary(self) -> dict:
        return {
            "decision": self.decision,
            "max_drop": self.max_drop,
            "confidence": self.confidence,
            "method": METHOD,
            "configurations": self.compared,
            "worst": self.worst,
            "drop": self.drop,
            "bound": self.bound,
            "shown_beyond": self.shown,
            "not_cleared": self.uncleared,
            "tolerated": self.tolerated,
            "line": self.line,
        }


def holm(pvalues, confidence: float) -> np.ndarray:
    """Which of the one-sided tests Holm's step-down rejects at 1 − confidence (statsmodels), none
    without asking when even the smallest p-value misses Holm's first step, α/K (the warm start asks
    after every round, and statsmodels' multipletests collects garbage at each call)."""
    from .paired import adjust

    p = np.asarray(pvalues, float)
    if not len(p) or p.min() > (1 - confidence) / len(p):
        return np.zeros(len(p), bool)
    return adjust(p, confidence, "holm")[0]


def cleared(b, c, n, max_drop: float, confidence: float) -> np.ndarray:
    """Per configuration, whether its upper bound is within max_drop, without finding the bound: Z is
    decreasing in δ₀, so drop_high ≤ max_drop exactly when Z(max_drop) ≤ −z (the simulations' shortcut)."""
    from scipy.stats import norm

    return score_z(b, c, n, max_drop) <= -norm.ppf(confidence)


def judge(b, c, n: int, cleared_, max_drop: float, confidence: float, sampled=None, room: int | None = None):
    """(decision, shown, uncleared, tolerated) as the module says: b, c the flips and `cleared_`
    whether the upper bound is within max_drop, per configuration; `sampled`: which of them the warm
    start's random sample holds and `room`: how many of those may stay uncleared (its tolerance less
    what its bound allows among the predicted ones; None: no warm start, every configuration must be
    cleared)."""
    reject = holm(beyond_p(b, c, n, max_drop), confidence)
    uncleared = ~np.asarray(cleared_, bool)
    sampled = np.zeros(len(uncleared), bool) if sampled is None else np.asarray(sampled, bool)
    tolerated = int((uncleared & sampled).sum())
    if reject.any():
        decision = "fail"
    elif not (uncleared & ~sampled).any() and (room is None or tolerated <= room):
        decision = "pass"
    else:
        decision = "undecided"
    return decision, int(reject.sum()), int(uncleared.sum()), tolerated
