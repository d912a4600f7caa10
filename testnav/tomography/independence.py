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

Clipping. The expected value in the denominator is clipped to [0.5/N, 1 − 0.5/N]: a first-order
product of exactly 0 or 1 (every input failing, or none, under one family; common at the top
levels) would make r_σ(1 − r_σ)/N zero and χ² infinite for any observation. Half an input's worth
(the usual continuity correction) keeps the term finite and still large for a real departure.
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


def dependence_components(active, ok: set) -> list[list[int]]:
    """The active families split into the connected components of their dependence graph (an edge
    between two families whose pair was not found independent): families in different components
    are pairwise independent, so their failures multiply."""
    parent = {int(a): int(a) for a in active}

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for a, b in combinations(parent, 2):
        if (a, b) not in ok:
            parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for a in parent:
        groups.setdefault(root(a), []).append(a)
    return sorted(groups.values())


def independent_families(pairs: pd.DataFrame) -> set:
    return {
        (int(a), int(b)) for a, b, ind in pairs[["family_i", "family_j", "independent"]].itertuples(index=False) if ind
    }


def independent_estimates(lattice: Lattice, r: dict, pairs: pd.DataFrame, relative: bool = True) -> np.ndarray:
    """§3's estimate for every higher-order test: the active families are split into groups that
    are independent of each other (`dependence_components`), and the test's robustness is the
    product of each group's lower-order test, relative to the clean robustness (r_0 · Π r_G / r_0;
    the plain product with `relative=False`). A family independent of all the others is a group of
    one (its first-order test); two dependent families are a group of two (their measured
    second-order test). With every pair independent this is the product of first-order tests; a
    group of three or more families has no measured lower-order test, and the estimate is NaN."""
    ok = independent_families(pairs)
    base = r[0] if relative else 1.0
    out = np.full(lattice.size, np.nan)
    for idx in np.flatnonzero(lattice.orders >= 3):
        theta = lattice.theta(idx)
        value = base
        for group in dependence_components(np.flatnonzero(theta), ok):
            sub = np.zeros(lattice.n, dtype=np.int64)
            sub[group] = theta[group]
            key = lattice.index(sub)
            if key not in r:
                value = np.nan
                break
            value *= r[key] / base
        out[idx] = value
    return out


def product_estimates(lattice: Lattice, r: dict, relative: bool = True) -> np.ndarray:
    """The all-independent estimate: the product of first-order tests for every test of order ≥ 3,
    whatever χ² found (what §3's estimate would be if every pair were independent)."""
    out = np.full(lattice.size, np.nan)
    for idx in np.flatnonzero(lattice.orders >= 3):
        out[idx] = first_order_product(lattice, r, lattice.theta(idx), relative)
    return out
