"""Paired statistics on per-input outcomes: two (or more) configurations measured on the same inputs.

* `mcnemar_exact`: McNemar's exact test of two versions (statsmodels).
* `paired_loss_interval`: a score-based interval for the difference of two paired proportions
  (Newcombe 1998, method 10: Wilson's score intervals of the two margins, from statsmodels,
  combined with the outcomes' correlation), so a loss measured on the same inputs as clean carries
  the paired interval, not one accuracy's half-width (docs/readings.md, "Findings by paired tests").
* `product_excess`: how far a configuration's accuracy lies below what its families alone predict
  if their failures were independent (TestifAI's relative product r₀ · Π rᵢ/r₀), with the delta
  method's standard error over inputs: the product is estimated on the same inputs, so its
  uncertainty and its correlation with the configuration's are in the test.
* `detectable`: the smallest effect a two-sided z-test with that standard error detects at a power.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

POWER = 0.8  # the power at which a test that found nothing states the smallest effect it could have seen


def mcnemar_exact(before: np.ndarray, after: np.ndarray) -> tuple[int, int, float]:
    """(b, c, p): inputs right before and wrong after (b), wrong before and right after (c), and the
    two-sided p-value of McNemar's exact test on the paired outcomes (statsmodels)."""
    from statsmodels.stats.contingency_tables import mcnemar

    before, after = np.asarray(before, bool), np.asarray(after, bool)
    b, c = int((before & ~after).sum()), int((~before & after).sum())
    if b + c == 0:
        return 0, 0, 1.0
    both, neither = int((before & after).sum()), int((~before & ~after).sum())
    return b, c, float(mcnemar([[both, b], [c, neither]], exact=True).pvalue)


def paired_loss_interval(before, after, confidence: float = 0.95) -> tuple[float, float, float]:
    """(loss, low, high): the share of inputs `before` gets right minus the share `after` does (the
    same inputs, boolean arrays), with Newcombe's hybrid score interval (method 10) at `confidence`."""
    from .intervals import binomial

    x, y = np.asarray(before, bool), np.asarray(after, bool)
    n = len(x)
    if n == 0:
        return 0.0, -1.0, 1.0
    a, b = int((x & y).sum()), int((x & ~y).sum())
    c, d = int((~x & y).sum()), int((~x & ~y).sum())
    p1, p2 = (a + b) / n, (a + c) / n
    (l1, l2), (u1, u2) = binomial(np.array([a + b, a + c]), n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / np.sqrt(float(margins)) if margins > 0 else 0.0
    down = np.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    up = np.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    loss = p1 - p2
    return float(loss), float(max(loss - down, -1.0)), float(min(loss + up, 1.0))


def product_excess(clean, singles, joint, relative: bool = True) -> tuple[float, float, float]:
    """(expected, excess, se): the relative product r₀ · Π min(rᵢ/r₀, 1) of the families alone
    (`singles`: one boolean outcome array per family, `clean` and `joint` the same inputs'), the
    excess expected − r_joint, and its delta-method standard error over the inputs. A family alone
    that leaves accuracy above clean predicts no gain in combination (its ratio is capped at 1).
    `relative=False`: the plain product Π rᵢ (TestifAI's literal §3)."""
    expected, excess, influence = excess_influence(clean, singles, joint, relative)
    n = len(influence)
    return expected, excess, float(np.sqrt(max(np.mean(influence**2), null_variance(clean, singles)) / n))


def null_variance(clean, singles) -> float:
    """Per input, the variance of the excess's influence where the families fail independently on the
    inputs right on clean (success ρᵢ = rᵢ/r₀ under each): r₀ · (P(1 − P) − Σ cᵢ² ρᵢ(1 − ρᵢ)), P = Π ρᵢ,
    cᵢ = Π_{m≠i} ρₘ. The standard error is never below it, so a rare joint failure (a handful of
    inputs failing under both) cannot make the test overconfident (docs/readings.md)."""
    r0 = float(np.mean(clean))
    if r0 == 0:
        return 0.0
    rho = np.array([min(float(np.mean(s)) / r0, 1.0) for s in singles])
    whole = float(np.prod(rho))
    c = np.array([np.prod(np.delete(rho, k)) for k in range(len(rho))])
    return max(r0 * (whole * (1 - whole) - float(np.sum(c**2 * rho * (1 - rho)))), 0.0)


def excess_influence(clean, singles, joint, relative: bool = True) -> tuple[float, float, np.ndarray]:
    """(expected, excess, influence): `product_excess`'s estimate and each input's influence on it
    (the delta method: ∂E/∂r₀ · (y₀ − r₀) + Σ ∂E/∂rᵢ · (yᵢ − rᵢ) − (y_joint − r_joint)), whose mean
    square over n inputs, divided by n, is the excess's variance."""
    y0 = np.asarray(clean, float)
    ys = [np.asarray(s, float) for s in singles]
    yj = np.asarray(joint, float)
    r0 = y0.mean() if relative else 1.0
    if r0 == 0:  # nothing right on clean: independence predicts nothing right
        return 0.0, float(-yj.mean()), -(yj - yj.mean())
    ratios = [min(s.mean() / r0, 1.0) if relative else s.mean() for s in ys]
    expected = r0 * float(np.prod(ratios))
    free = [not relative or s.mean() < r0 for s in ys]  # capped ratios are constants
    influence = -(yj - yj.mean())
    if relative:
        influence = influence + (1 - sum(free)) * expected / r0 * (y0 - r0)
    for k, (s, f) in enumerate(zip(ys, free)):
        if f:
            others = float(np.prod([r for m, r in enumerate(ratios) if m != k]))  # ∂E/∂rₖ
            influence = influence + others * (s - s.mean())
    return expected, float(expected - yj.mean()), influence


def z_pvalue(estimate: float, se: float) -> float:
    """Two-sided p of estimate / se against a standard normal; with no spread, 1 at 0 and 0 elsewhere."""
    if se <= 0:
        return 1.0 if abs(estimate) < 1e-12 else 0.0
    return float(2 * norm.sf(abs(estimate) / se))


def detectable(se, alpha: float, power: float = POWER):
    """The smallest |effect| a two-sided z-test at level `alpha` with standard error `se` detects
    with probability `power`: (z₁₋α/₂ + z_power) · se."""
    return (norm.isf(alpha / 2) + norm.ppf(power)) * np.asarray(se, float)
