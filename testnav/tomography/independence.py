"""Independence of perturbation families (§3).

For each pair of families (i, j), the observed second-order robustness r̂_σ of every test σ
with exactly σ_i, σ_j > 0 is compared with the value independence predicts from first-order
tests. The paper's χ² = Σ_σ (r̂_σ − r_σ)² / (r_σ(1 − r_σ)/N_σ) takes the prediction r_σ as a known
constant, though it is estimated on the same inputs; under independence its size is near 0
(issue 74). Here each level pair's excess r_σ − r̂_σ is tested on the per-input outcomes, with the
delta method's standard error (testnav/core/paired.py), the pair's p is its level pairs' smallest
(Bonferroni within the pair) and Holm runs over the pairs. A pair whose test does not reject is
*treated* as independent by §3's estimate, and reported with the smallest excess the test would
have detected; it is not shown independent.

Predicted value. The paper writes the plain product r_{σ_i} · r_{σ_j}. That product also
multiplies the clean error rate in twice, so for any model below 100 % clean accuracy it
rejects independence of every pair once N is large. By default we use the product of
the *relative* first-order robustness, r_0 · (r_{σ_i}/r_0) · (r_{σ_j}/r_0) (failures caused
independently, given the input's clean outcome); `relative_to_clean: false` gives the
paper's literal product.

Degenerate tests. A level pair with no spread at all (every input's influence 0) gives p = 1 at an
excess of 0 and p = 0 otherwise (testnav.core.paired.z_pvalue).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

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


def chi2_pairs(lattice: Lattice, tests: dict, alpha: float = 0.05, relative: bool = True) -> pd.DataFrame:
    """One row per family pair: χ², the sum of its level pairs' squared z (each excess over its
    delta-method standard error on the per-input outcomes, `tests`: lattice index -> outcomes in D's
    shared order), `dof` (level pairs tested), `p_value` (the smallest level pair's p times their
    number: Bonferroni within the pair), `p_adjusted` (Holm over the pairs), `detectable_points` (the
    smallest excess at one level pair detected with 80 % power at the level a lone effect must pass)
    and `independent`: §3's decision, the pair treated as independent because its test did not
    reject (not shown dependent; never shown independent)."""
    from statsmodels.stats.multitest import multipletests

    from ..core.paired import POWER, detectable

    rows = [
        {"family_i": i, "family_j": j, **pair_test(lattice, tests, i, j, relative)}
        for i, j in combinations(range(lattice.n), 2)
    ]
    df = pd.DataFrame(rows, columns=["family_i", "family_j", "chi2", "dof", "p_value", "_se"])
    tested = df["p_value"].notna()
    df["p_adjusted"] = np.nan
    if tested.any():
        df.loc[tested, "p_adjusted"] = multipletests(df.loc[tested, "p_value"].to_numpy(float), method="holm")[1]
    df["independent"] = df["p_adjusted"] >= alpha  # NaN (no level pair measured): not treated as independent
    lone = alpha / max(int(df.loc[tested, "dof"].sum()), 1)
    df["detectable_points"] = [100 * float(detectable(se, lone, POWER)) if se > 0 else np.nan for se in df["_se"]]
    return df.drop(columns="_se")


def pair_test(lattice: Lattice, tests: dict, i: int, j: int, relative: bool) -> dict:
    """Families i and j at every level pair measured with both alone and clean: each excess's z on the
    inputs they share (a prefix of D's order); their χ² = Σ z², the pair's Bonferroni p and the
    smallest standard error."""
    from ..core.paired import product_excess, z_pvalue

    z, p, se = [], [], []
    for a in range(1, lattice.levels):
        for b in range(1, lattice.levels):
            theta = np.zeros(lattice.n, dtype=np.int64)
            theta[i], theta[j] = a, b
            one, two = theta.copy(), theta.copy()
            one[j], two[i] = 0, 0
            keys = [0, int(lattice.index(one)), int(lattice.index(two)), int(lattice.index(theta))]
            if not all(k in tests for k in keys):
                continue
            n = min(len(tests[k]) for k in keys)
            y = [np.asarray(tests[k][:n], bool) for k in keys]
            _, excess, s = product_excess(y[0], y[1:3], y[3], relative)
            z.append(excess / s if s > 0 else 0.0)
            p.append(z_pvalue(excess, s))
            se.append(s)
    if not p:
        return {"chi2": 0.0, "dof": 0, "p_value": float("nan"), "_se": 0.0}
    return {
        "chi2": float(np.sum(np.square(z))),
        "dof": len(p),
        "p_value": min(1.0, len(p) * min(p)),
        "_se": min(se),
    }


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
