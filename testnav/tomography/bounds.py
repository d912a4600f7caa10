"""Bounds on R(Q) when most of ⟦Q⟧ is predicted, valid at every look: the query's own tests sampled
without replacement, and each test's inputs.

R(Q) is the mean accuracy r_σ over the tests σ of ⟦Q⟧. The tomography measured some of them (its
tests of order ≤ 2); the forest predicts the rest, U. The forest learned from low orders only, so on
the high orders that most queries are made of its error is not noise around zero: it is a bias, of
unknown size and sign (docs/readings.md, "Verdicts"), and it can hide a few configurations that
collapse. No interval built from the low orders alone can bound it. So the bound measures: a simple
random sample of U, in a uniformly random order, and the residuals d = r − r̂ of the tests drawn
bound the mean residual over the whole of U (prediction-powered, Angelopoulos et al. 2023):

    Σ_U r = Σ_U r̂ + |U| · mean_U(d),    d ∈ [−max_U r̂, 1 − min_U r̂]

The configurations' term is a confidence sequence for mean_U(d) from sampling without replacement
(tomography/wor.py: Waudby-Smith & Ramdas's betting confidence sequence, on d mapped from that range,
known before any test is drawn, onto [0, 1]: narrower than [−1, 1] above, where r̂ is high). It
assumes no normal approximation, narrows to nothing when U is all drawn, and holds at every sample
size at once: a gate may look after every test it measures, with no spending of α over looks. It is
intersected with what holds whatever the forest says (every test of U not drawn anywhere in [0, 1]).

The inputs' term: each r_σ is a share of the n_σ inputs it was read on (early stopping reads fewer
than N; a test still predicted counts N), and the question a gate asks is about the model on the
inputs' population. Each test gets Wilson's score interval (core/intervals.py) at its r_σ (a test
still predicted: r̂_σ corrected by the sample's mean residual), and the term is the mean over ⟦Q⟧ of
the distances from r_σ down to its low end and up to its high end (the tests read the same inputs,
so their errors correlate; the mean of their deviations bounds the deviation of their mean). A
rerun of a gate on more inputs looks again at the same question, so α is spent over reruns: a run
on N inputs spends α_N = α_in / ((j + 1)(j + 2)) with j = ⌊log2(N / RERUN_BASE)⌋ (0 below
2·RERUN_BASE), which sums to α_in over the bands of N that reruns with more inputs pass through.

α: 1 − `confidence` split evenly between the two terms (the inputs' alone when nothing is
predicted), so that the interval holds R(Q) with probability ≥ `confidence` (a union bound). No
prediction or estimate is clipped before the interval is built from them; only its ends are clipped
to [0, 1], and the prediction-powered estimate is reported unclipped.

`share_bound` answers the other question a sample can: how many members of a finite population
are bad (here: configurations a warm-started comparison left predicted that lost more than
max_drop, pipeline/warm.py), from the bad ones in a simple random sample of it. The count is
hypergeometric, so the bound is exact; look j (0, 1, …) spends α / 2^(j+1) (Bonferroni over looks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.intervals import binomial
from .wor import confidence_sequence

MIN_SAMPLE = 10  # a gate's first sample of unmeasured tests (and the warm start's first look at most)
RERUN_BASE = 100  # inputs: the first band of the inputs' spending over reruns is [100, 200)


@dataclass(frozen=True)
class Bound:
    low: float
    high: float
    estimate: float  # the prediction-powered point estimate, unclipped (the plain estimate before any sample)
    sampled: int  # tests of U measured for this bound
    unmeasured: int  # tests still predicted


def inputs_alpha(alpha: float, n_inputs: int) -> float:
    """The share of α that a run on `n_inputs` inputs spends on the inputs' term (see above)."""
    j = int(np.floor(np.log2(max(n_inputs, RERUN_BASE) / RERUN_BASE)))
    return alpha / ((j + 1) * (j + 2))


def query_bound(
    r_known: np.ndarray,
    n_known: np.ndarray,
    r_sampled: np.ndarray,
    pred_sampled: np.ndarray,
    n_sampled: np.ndarray,
    pred_rest: np.ndarray,
    n_inputs: int,
    confidence: float = 0.95,
) -> Bound:
    """The bound on R(Q) over measured tests (`r_known` on `n_known` inputs each), a random sample of
    the unmeasured ones in the order drawn (`r_sampled`, predicted `pred_sampled`, on `n_sampled`
    inputs) and the rest, predicted (`pred_rest`), for a run on `n_inputs` inputs."""
    r_known, r_s, p_s, p_rest = (np.asarray(a, float) for a in (r_known, r_sampled, pred_sampled, pred_rest))
    k, rest = len(r_s), len(p_rest)
    total = len(r_known) + k + rest
    if total == 0:
        raise ValueError("a bound over no test")
    unmeasured = k + rest
    alpha = 1 - confidence
    alpha_configs = alpha / 2 if unmeasured else 0.0
    d = r_s - p_s
    shift = float(d.mean()) if k else 0.0
    known_sum = r_known.sum()
    estimate = (known_sum + r_s.sum() + (p_rest + shift).sum()) / total
    low_u, high_u = 0.0, 0.0
    if unmeasured:
        pred = np.r_[p_s, p_rest]
        d_low, d_span = -pred.max(), 1 + pred.max() - pred.min()  # every d = r − r̂ of U lies in [d_low, d_low + d_span]
        x_low, x_high = confidence_sequence((d - d_low) / d_span, unmeasured, alpha_configs)
        low_u = max(pred.sum() + unmeasured * (d_low + d_span * x_low), r_s.sum())
        high_u = min(pred.sum() + unmeasured * (d_low + d_span * x_high), r_s.sum() + rest)
    down, up = inputs_term(
        np.r_[r_known, r_s, np.clip(p_rest + shift, 0, 1)],
        np.r_[np.asarray(n_known, float), np.asarray(n_sampled, float), np.full(rest, float(n_inputs))],
        1 - inputs_alpha(alpha - alpha_configs, n_inputs),
    )
    low = (known_sum + low_u) / total - down
    high = (known_sum + high_u) / total + up
    return Bound(float(np.clip(low, 0, 1)), float(np.clip(high, 0, 1)), float(estimate), k, rest)


def inputs_term(r: np.ndarray, n: np.ndarray, confidence: float) -> tuple[float, float]:
    """(down, up): the mean over the tests of the distance from r_σ to the low and to the high end of
    its Wilson interval on n_σ inputs at `confidence`."""
    if not len(r):
        return 0.0, 0.0
    low, high = binomial(r * n, n, confidence)
    return float(np.mean(np.maximum(r - low, 0))), float(np.mean(np.maximum(high - r, 0)))


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
    looks), less the `seen` already counted. Exact at any size, and valid when no bad
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
