"""Independence of perturbation families (§3).

For each pair of families (i, j), the observed second-order robustness r̂_σ of every test σ
with exactly σ_i, σ_j > 0 is compared with the value independence predicts from first-order
tests, by χ² = Σ_σ (r̂_σ − r_σ)² / (r_σ(1 − r_σ)/N_σ) with |S| degrees of freedom
(X_σ ~ Binomial(N_σ, r_σ)); independence is rejected at level α.

Predicted value. The paper writes the plain product r_{σ_i} · r_{σ_j}. That product also
multiplies the clean error rate in twice, so for any model below 100 % clean accuracy it
rejects independence of every pair once N is large. By default we use the product of
the *relative* first-order robustness, r_0 · (r_{σ_i}/r_0) · (r_{σ_j}/r_0) (failures caused
independently, given the input's clean outcome); `relative_to_clean: false` gives the
paper's literal product.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import chi2

from ..core.lattice import Lattice


def first_order_product(lattice: Lattice, r: dict, theta: np.ndarray, relative: bool) -> float:
    """Independence estimate of r_θ from the first-order tests r (index -> robustness)."""
    base = r[0] if relative else 1.0
    value = base
    for i, level in enumerate(theta):
        if level:
            single = np.zeros(lattice.n, dtype=np.int64)
            single[i] = level
            value *= r[lattice.index(single)] / (base if relative else 1.0)
    return float(value)


def chi2_pairs(lattice: Lattice, r: dict, n: dict, alpha: float = 0.05, relative: bool = True) -> pd.DataFrame:
    """One row per family pair: χ², degrees of freedom, p-value, independent (p ≥ α)."""
    rows = []
    for i, j in combinations(range(lattice.n), 2):
        stat, tests = 0.0, 0
        for a in range(1, lattice.levels):
            for b in range(1, lattice.levels):
                theta = np.zeros(lattice.n, dtype=np.int64)
                theta[i], theta[j] = a, b
                idx = lattice.index(theta)
                if idx not in r:
                    continue
                expected = np.clip(first_order_product(lattice, r, theta, relative), 0.5 / n[idx], 1 - 0.5 / n[idx])
                stat += (r[idx] - expected) ** 2 / (expected * (1 - expected) / n[idx])
                tests += 1
        p = float(chi2.sf(stat, tests)) if tests else float("nan")
        rows.append({"family_i": i, "family_j": j, "chi2": stat, "dof": tests, "p_value": p, "independent": p >= alpha})
    return pd.DataFrame(rows)


def independent_estimates(lattice: Lattice, r: dict, pairs: pd.DataFrame, relative: bool = True) -> np.ndarray:
    """Product-of-marginals estimate for every higher-order test whose active families are
    pairwise independent (NaN elsewhere)."""
    ok = {
        (int(a), int(b)) for a, b, ind in pairs[["family_i", "family_j", "independent"]].itertuples(index=False) if ind
    }
    out = np.full(lattice.size, np.nan)
    for idx in np.flatnonzero(lattice.orders >= 3):
        theta = lattice.theta(idx)
        active = np.flatnonzero(theta)
        if all((a, b) in ok for a, b in combinations(active, 2)):
            out[idx] = first_order_product(lattice, r, theta, relative)
    return out
