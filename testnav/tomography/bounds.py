"""Valid bounds on R(Q) when most of ⟦Q⟧ is predicted: prediction-powered, on the query's own tests.

R(Q) is the mean accuracy r_σ over the tests σ of ⟦Q⟧. The tomography measured some of them (its
tests of order ≤ 2, and any that earlier queries measured); the forest predicts the rest. The
forest learned from low orders only, so on the high orders that most queries are made of its error
is not noise around zero: it is a bias, of unknown size and sign (docs/readings.md, "Query bounds").
No interval built from the low orders alone can bound it. So the bound measures: a simple random
sample S of the query's unmeasured tests U is measured, and the mean residual d = r − r̂ over S
corrects the prediction on the rest, as prediction-powered inference's mean estimator does
(Angelopoulos et al. 2023; here with the finite-population correction, since U is finite):

    R̂ = (Σ_measured r + Σ_S r + Σ_{U∖S} r̂ + |U∖S|·d̄) / |⟦Q⟧|
    configurations' term: |U∖S|/|⟦Q⟧| · t_{k−1} · s_d/√k · √(1 − k/|U|)         (k = |S| ≥ MIN_SAMPLE)

The other uncertainty is the inputs': each r_σ is a share of the n_σ inputs it was measured on
(early stopping reads fewer than N), and the question a gate asks is about the model on the inputs'
population. That term is z · mean_σ √(r_σ(1 − r_σ)/n_σ) (the standard error of a mean of
proportions measured on the same inputs is at most the mean of their standard errors), with n_σ = N
for tests still predicted. The bound is the prediction-powered interval (both terms added)
intersected with one that holds whatever the forest says: the unmeasured tests anywhere in [0, 1].
Before MIN_SAMPLE tests of U are measured, only that one applies.

A gate that measures until it decides looks at the data several times; look j (0, 1, …) spends
α / 2^(j+1) of the configurations' term (Bonferroni over the looks), so the chance of a wrong
decision over all looks stays below α.

`share_bound` answers the other question a sample can: how many members of a finite population
are bad (here: configurations a warm-started comparison left predicted that lost more than
max_drop, pipeline/warm.py), from the bad ones in a simple random sample of it. The count is
hypergeometric, so the bound is exact, with the same spending of α over looks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_SAMPLE = 10  # sampled tests before the residual's spread is trusted (fewer: the [0, 1] bound only)


@dataclass(frozen=True)
class Bound:
    low: float
    high: float
    estimate: float  # the prediction-powered point estimate (= the plain estimate before any sample)
    sampled: int  # tests of U measured for this bound
    unmeasured: int  # tests still predicted


def query_bound(
    r_known: np.ndarray,
    n_known: np.ndarray,
    r_sampled: np.ndarray,
    pred_sampled: np.ndarray,
    n_sampled: np.ndarray,
    pred_rest: np.ndarray,
    n_inputs: int,
    confidence: float = 0.95,
    look: int = 0,
) -> Bound:
    """The bound on R(Q) over measured tests (`r_known` on `n_known` inputs each), a random sample
    of the unmeasured ones (`r_sampled`, predicted `pred_sampled`, on `n_sampled` inputs) and the
    rest, predicted (`pred_rest`). `look`: how many times before this a gate looked (see above)."""
    from scipy import stats

    r_known, r_s, p_s, p_rest = (np.asarray(a, float) for a in (r_known, r_sampled, pred_sampled, pred_rest))
    n_known, n_s = np.asarray(n_known, float), np.asarray(n_sampled, float)
    k, rest = len(r_s), len(p_rest)
    total = len(r_known) + k + rest
    if total == 0:
        raise ValueError("a bound over no test")
    alpha = 1 - confidence
    z = stats.norm.ppf(1 - alpha / 2)
    measured_sum = r_known.sum() + r_s.sum()
    d = r_s - p_s
    shift = float(d.mean()) if k >= MIN_SAMPLE else 0.0
    estimate = (measured_sum + np.clip(p_rest + shift, 0, 1).sum()) / total
    # the inputs': every test's standard error on the inputs it was read on (predicted ones: all N)
    r_rest = np.clip(p_rest + shift, 0, 1)
    se = np.r_[
        _se(r_known, n_known),
        _se(r_s, n_s),
        _se(r_rest, np.full(rest, float(n_inputs))),
    ]
    inputs = z * se.sum() / total
    measured_inputs = z * se[: len(r_known) + k].sum() / total
    # whatever r̂ says: every predicted test anywhere in [0, 1]
    low, high = measured_sum / total - measured_inputs, (measured_sum + rest) / total + measured_inputs
    if rest and k >= MIN_SAMPLE:
        population = k + rest
        a_look = alpha / 2 ** (look + 1)
        t = stats.t.ppf(1 - a_look / 2, k - 1)
        spread = float(d.std(ddof=1)) if k > 1 else 1.0
        config = rest / total * t * spread / np.sqrt(k) * np.sqrt(max(1 - k / population, 0.0))
        low, high = max(low, estimate - config - inputs), min(high, estimate + config + inputs)
    elif not rest:
        low, high = estimate - inputs, estimate + inputs
    return Bound(float(np.clip(low, 0, 1)), float(np.clip(high, 0, 1)), float(estimate), k, rest)


def _se(r: np.ndarray, n: np.ndarray) -> np.ndarray:
    r = np.clip(r, 0, 1)
    return np.sqrt(r * (1 - r) / np.maximum(n, 1))


@dataclass(frozen=True)
class ShareBound:
    """How many of a finite population's members can be bad, from a simple random sample of it."""

    bad_high: int  # at most this many of the members not sampled are bad (at `confidence`)
    seen: int  # bad members among the sample
    sampled: int
    population: int
    confidence: float
    look: int


def share_bound(seen: int, sampled: int, population: int, confidence: float = 0.95, look: int = 0) -> ShareBound:
    """The exact upper bound on how many members of a population of `population` are bad, when a
    simple random sample of `sampled` of them (without replacement) holds `seen` bad ones: the
    largest M whose hypergeometric P(X ≤ seen) is above the look's α (α / 2^(look+1), Bonferroni over
    looks as above), less the `seen` already counted. Exact at any size, and valid when no bad
    member was seen, where a normal interval is not. Every member sampled: the bound is 0."""
    from scipy import stats

    if not 0 <= seen <= sampled <= population:
        raise ValueError(
            f"seen={seen}, sampled={sampled}, population={population}: need 0 ≤ seen ≤ sampled ≤ population"
        )
    a_look = (1 - confidence) / 2 ** (look + 1)
    m = np.arange(seen, population - (sampled - seen) + 1)
    plausible = m[stats.hypergeom.cdf(seen, population, m, sampled) > a_look]
    return ShareBound(int(plausible.max()) - seen, seen, sampled, population, confidence, look)


def planned_sample(population: int, allowed: int, confidence: float = 0.95) -> int:
    """The smallest simple random sample that, holding no bad member, bounds the bad ones left at
    `allowed` or fewer at the first look (the whole population when even that needs every member)."""
    low, high = 0, population  # bad_high falls as the sample grows, and is 0 with every member sampled
    while low < high:
        mid = (low + high) // 2
        if share_bound(0, mid, population, confidence).bad_high <= allowed:
            high = mid
        else:
            low = mid + 1
    return low
