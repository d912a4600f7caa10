"""Intervals on measured accuracies: Wilson's binomial interval (statsmodels) at a `confidence`.

An accuracy ψ measured on N inputs is a proportion; the interval is the range of the accuracy on
the inputs' population that the N at hand cannot rule out. Wilson's interval keeps its coverage near
the nominal level even for accuracies near 0 or 1, where the normal approximation collapses to a
point (docs/readings.md, "Intervals").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import UserError

METHOD = "wilson"


def check_confidence(value, key: str = "confidence") -> float:
    """A confidence level in (0, 1), e.g. 0.95."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise UserError(f"{key}={value}: a probability in (0, 1), e.g. {key}=0.95")
    return float(value)


def binomial(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high): Wilson's interval for `successes` of `n` (arrays or numbers), at `confidence`;
    [0, 1] where n is 0."""
    from statsmodels.stats.proportion import proportion_confint

    s, m = np.broadcast_arrays(np.asarray(successes, float), np.asarray(n, float))
    low, high = np.zeros(s.shape), np.ones(s.shape)
    ok = m > 0
    if ok.any():
        lo, hi = proportion_confint(s[ok], m[ok], alpha=1 - check_confidence(confidence), method=METHOD)
        low[ok], high[ok] = np.clip(lo, 0, 1), np.clip(hi, 0, 1)
    return low, high


def half_width(n: int, confidence: float = 0.95) -> float:
    """The widest half-width of an accuracy's interval on n inputs (at ψ = 1/2): the resolution at
    which two accuracies measured on the same n inputs can be told apart."""
    low, high = binomial(n // 2, n, confidence) if n % 2 == 0 else binomial(n / 2, n, confidence)
    return float((high - low) / 2)


def with_psi_intervals(table: pd.DataFrame, n: int, confidence: float = 0.95) -> pd.DataFrame:
    """The table with `psi_low`, `psi_high` (ψ's interval on its n inputs) after `psi`; every other
    column unchanged. ψ is a share of the n inputs, so ψ·n is the count of correct ones."""
    low, high = binomial(np.rint(table["psi"].to_numpy(float) * n), n, confidence)
    out = table.drop(columns=["psi_low", "psi_high"], errors="ignore")
    at = list(out.columns).index("psi") + 1
    out.insert(at, "psi_low", low)
    out.insert(at + 1, "psi_high", high)
    return out
