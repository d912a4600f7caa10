"""Synthetic ground-truth tables with known structure, for tuning and checking searches away
from the two mnist5k tables (docs/tomonav.md, "Held-out tuning").

A table is what `groundtruth.table=` replays: t1..tn, delta, rho over all of {0..ℓ−1}^n.
Each family i has a severity s_i(level), increasing from s_i(0) = 0, and two weights: a_i (how
much it hurts accuracy) and f_i (how much it distorts the input). Then

    δ = 1 − exp(−h_δ),   ρ = exp(−h_ρ),

with h_δ built from the severities by the table's `structure`:

* additive:        h_δ = Σ a_i s_i
* multiplicative:  δ = 1 − Π (1 − a_i s_i)   (independent failures: TestifAI's assumption)
* pairs:           additive + a few random pairs c_ij s_i s_j (interactions the main effects miss)
* threshold:       h_δ = Σ a_i 1[level_i ≥ τ_i] + a small slope (flat then a cliff)

and h_ρ = Σ f_i s_i always. `coupling` ∈ [0, 1] sets how closely f follows a: near 1 the two
objectives trade off along one axis, so the front P* is long and spread over many orders;
near 0 a few families are cheap in fidelity and deadly for accuracy, so P* is short and
concentrated. `noise` adds Gaussian noise (sd, on both objectives); `ties` > 0 rounds both
objectives to that many steps, so many configurations tie. Everything is drawn from
`numpy.random.default_rng(seed)`: the same arguments give the same table.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from ..core.lattice import Lattice
from ..errors import UserError

STRUCTURES = ("additive", "multiplicative", "pairs", "threshold")


def synthetic_table(
    structure: str = "additive",
    n: int = 4,
    levels: int = 6,
    seed: int = 0,
    coupling: float = 0.5,
    noise: float = 0.0,
    ties: int = 0,
) -> pd.DataFrame:
    """One generated ground-truth table (module docstring)."""
    if structure not in STRUCTURES:
        raise UserError(f"structure={structure} (valid: {', '.join(STRUCTURES)})")
    if not 0 <= coupling <= 1:
        raise UserError(f"coupling={coupling}: must lie in [0, 1]")
    if noise < 0 or ties < 0 or int(ties) != ties:
        raise UserError(f"noise={noise}, ties={ties}: noise must be ≥ 0 and ties a whole number ≥ 0")
    lat = Lattice(int(n), int(levels))
    rng = np.random.default_rng(seed)
    steps = rng.gamma(2.0, size=(lat.n, lat.levels - 1))
    sev = np.concatenate([np.zeros((lat.n, 1)), np.cumsum(steps, 1) / steps.sum(1, keepdims=True)], axis=1)
    a = rng.uniform(0.2, 1.5, lat.n)
    f = coupling * a / a.mean() + (1 - coupling) * rng.uniform(0.05, 2.0, lat.n)
    x = lat.tuples
    s = sev[np.arange(lat.n)[None], x]  # (|Θ|, n) severities
    h_rho = s @ f
    if structure == "multiplicative":
        delta = 1 - np.prod(1 - np.clip(a / a.max() * 0.9, 0, 0.95)[None] * s, axis=1)
    else:
        if structure == "threshold":
            tau = rng.integers(1, lat.levels, lat.n)
            h = (x >= tau[None]).astype(float) @ a + 0.1 * s @ a
        else:
            h = s @ a
        if structure == "pairs":
            for _ in range(max(1, lat.n // 2)):
                i, j = rng.choice(lat.n, 2, replace=False)
                h = h + rng.uniform(1.0, 3.0) * s[:, i] * s[:, j]
        delta = 1 - np.exp(-h)
    rho = np.exp(-h_rho)
    if noise:
        delta = delta + rng.normal(0, noise, lat.size)
        rho = rho + rng.normal(0, noise, lat.size)
    delta[0], rho[0] = 0.0, max(1.0, rho.max())  # θ = 0 is the clean reference
    if ties:
        delta, rho = (np.round(v * ties) / ties for v in (delta, rho))
    df = pd.DataFrame(x, columns=[f"t{i + 1}" for i in range(lat.n)])
    df["delta"], df["rho"] = delta, rho
    return df


# Named profiles (structure × the knobs above): the generated suite that tunes and checks TomoNav
# and the stopping rule. A profile is a set of keyword arguments; its tables differ by seed.
PROFILES = {
    "additive": dict(structure="additive"),
    "multiplicative": dict(structure="multiplicative"),
    "pairs": dict(structure="pairs"),
    "threshold": dict(structure="threshold"),
    "noisy": dict(structure="pairs", noise=0.03),
    "ties": dict(structure="additive", ties=20),
    "concentrated": dict(structure="pairs", coupling=0.0, noise=0.02),
    "spread": dict(structure="multiplicative", coupling=1.0),
    "n3_l8": dict(structure="pairs", n=3, levels=8),
    "n5_l4": dict(structure="additive", n=5, levels=4),
}


def profile_table(name: str, seed: int) -> pd.DataFrame:
    if name not in PROFILES:
        raise UserError(f"profile={name} (valid: {', '.join(PROFILES)})")
    return synthetic_table(**PROFILES[name], seed=seed)


def suite(seeds) -> list[tuple[str, int, pd.DataFrame]]:
    """Every profile at every seed: (profile, seed, table)."""
    return [(name, int(s), profile_table(name, int(s))) for s in seeds for name in PROFILES]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Write a generated ground-truth table (replay it with groundtruth.table=…)"
    )
    ap.add_argument("out", help="a .csv or .parquet path")
    ap.add_argument("--profile", default="pairs", help=f"one of {', '.join(PROFILES)}")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    df = profile_table(args.profile, args.seed)
    df.to_parquet(args.out, index=False) if args.out.endswith((".parquet", ".pq")) else df.to_csv(args.out, index=False)
    print(f"{args.out}: profile {args.profile}, seed {args.seed}, {len(df)} configurations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
