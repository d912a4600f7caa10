"""A confidence sequence for the mean of a finite population of values in [0, 1], sampled without
replacement: valid at every sample size at once, so a gate may look after every test it measures.

Waudby-Smith & Ramdas, "Confidence sequences for sampling without replacement" (NeurIPS 2020) and
"Estimating means of bounded random variables by betting" (JRSS-B 2024, §6), the hedged capital
process. A population of N values x ∈ [0, 1] with mean μ is drawn in a uniformly random order. For a
candidate mean m, the mean of what is left before the t-th draw is

    μ_t(m) = (N·m − Σ_{i<t} x_i) / (N − t + 1),

so, were m the truth, a gambler betting λ_t (fixed before x_t is seen) on x_t − μ_t(m) plays a fair
game: K⁺_t(m) = Π (1 + λ⁺_i (x_i − μ_i(m))) and K⁻_t(m) = Π (1 − λ⁻_i (x_i − μ_i(m))) are
non-negative martingales starting at 1. By Ville's inequality, the hedged max(K⁺/2, K⁻/2) ever
reaches 1/α with probability at most α, so every m whose capital reached it by t is ruled out, and
what is left at t (an interval) holds μ at every t at once with probability ≥ 1 − α. The bets are
the papers' predictable plug-in: λ_t = √(2 log(2/α) / (σ̂²_{t−1} · t · log(1 + t))) from the running
variance (prior mean 1/2, prior variance 1/4, one pseudo-observation), truncated at c/μ_t(m) and
c/(1 − μ_t(m)) with c = 3/4 (the papers suggest 1/2 to 3/4) so that the capital stays positive. Values of m that the draws make
impossible (no way to fill the rest of the population in [0, 1]) are ruled out by logic alone, and
the grid of candidate m spans only the possible ones; the interval's ends are widened by one grid
step, so that the grid never makes it narrower than the set it approximates.
"""

from __future__ import annotations

import numpy as np

GRID = 1000  # candidate means between the logically possible ends
TRUNCATION = 0.75  # c: a bet never stakes more than three quarters of what it could lose


def bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """λ_1..λ_k: each from the values before it only (predictable)."""
    k = len(x)
    t = np.arange(1, k + 1)
    running_mean = (0.5 + np.cumsum(x)) / (t + 1)  # μ̂_t, x_1..x_t and one pseudo-observation at 1/2
    running_var = (0.25 + np.cumsum((x - running_mean) ** 2)) / (t + 1)  # σ̂²_t
    var_before = np.r_[0.25, running_var[:-1]]  # σ̂²_{t−1}
    return np.sqrt(2 * np.log(2 / alpha) / (var_before * t * np.log1p(t)))


def logical(x: np.ndarray, population: int) -> tuple[float, float]:
    """The population means that the draws leave possible: the rest anywhere in [0, 1]."""
    s = float(np.sum(x))
    return s / population, (s + population - len(x)) / population


def confidence_sequence(x, population: int, alpha: float = 0.05, grid: int = GRID) -> tuple[float, float]:
    """(low, high): the population mean's interval after the draws `x` (values in [0, 1], in the
    order drawn, without replacement from `population` values), at confidence 1 − α uniformly over
    every number of draws."""
    x = np.asarray(x, float)
    k = len(x)
    if not 0 <= k <= population:
        raise ValueError(f"{k} draws from a population of {population}")
    if not ((x >= 0) & (x <= 1)).all():
        raise ValueError("values outside [0, 1]")
    low, high = logical(x, population)
    if k == 0 or high - low <= 0:
        return low, high
    m = np.linspace(low, high, grid + 1)
    t = np.arange(1, k + 1)
    drawn_before = np.r_[0.0, np.cumsum(x)[:-1]]
    mu = (population * m[:, None] - drawn_before) / (population - t + 1)  # (grid, k): μ_t(m)
    mu = np.clip(mu, 0, 1)  # within [0, 1] already for every possible m; guards rounding
    lam = bets(x, alpha)
    with np.errstate(divide="ignore"):
        up = np.minimum(lam, TRUNCATION / mu)
        down = np.minimum(lam, TRUNCATION / (1 - mu))
    gain = x - mu
    capital_up = np.cumsum(np.log1p(up * gain), axis=1)
    capital_down = np.cumsum(np.log1p(-down * gain), axis=1)
    ruled_out = (np.maximum(capital_up, capital_down) >= np.log(2 / alpha)).any(axis=1)
    kept = np.flatnonzero(~ruled_out)
    if not len(kept):  # every candidate ruled out: an event of probability ≤ α; say only what logic can
        return low, high
    step = (high - low) / grid
    return max(low, m[kept[0]] - step), min(high, m[kept[-1]] + step)
