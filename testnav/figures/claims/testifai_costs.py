"""TestifAI §5.3–5.4: what partial tomography and early stopping save in inferences, and 4D's MSE with
only Θ≤2 measured against 3D's (inferences.csv)."""

from __future__ import annotations

import math

from .evidence import Study
from .registry import claim
from .rules import COMPARABLE, Claim, within


def regimes(study: Study):
    """inferences.csv indexed by (tomography, regime); None without it."""
    return None if study.inferences is None else study.inferences.set_index(["tomography", "regime"])


@claim("study")
def partial_saves(ev, study: Study) -> Claim | None:
    """§5.4: partial tomography (Θ≤2, no early stopping) reduces 3D inferences by at least 58%."""
    d = regimes(study)
    if d is None:
        return study.lacking("§5.4", "Partial tomography reduces inferences by 58%")
    if ("3D", "partial") not in d.index or ("3D", "full") not in d.index:
        return None
    red = 100 * (1 - d.loc[("3D", "partial"), "inferences"] / d.loc[("3D", "full"), "inferences"])
    return Claim(
        "TestifAI",
        "§5.4",
        "Partial tomography (Θ≤2, no early stopping) reduces 3D inferences by at least 58%",
        study.name,
        f"reduction {red:.1f}%",
        [within("at least 58%", red >= 57.5, f"{red:.1f}%, tolerance 0.5 points (the paper rounds to whole per cent)")],
    )


@claim("study")
def early_stopping_saves(ev, study: Study) -> Claim | None:
    """§5.4: early stopping lowers the cost further, to 61.6%–83% of partial tomography's."""
    d = regimes(study)
    if d is None or ("3D", "partial_early_stopping") not in d.index or ("3D", "partial") not in d.index:
        return None
    es, pa = d.loc[("3D", "partial_early_stopping")], d.loc[("3D", "partial")]
    share = es["inferences"] / pa["inferences"]
    return Claim(
        "TestifAI",
        "§5.4",
        "Early stopping lowers the inference cost further, to 61.6%–83% of partial tomography's",
        study.name,
        f"{share:.1%} of partial's inferences (MSE {es['mse']:.4f} against {pa['mse']:.4f} without early stopping)",
        [within("61.6%–83% of partial's", 0.616 <= share <= 0.83, f"{share:.1%}, the paper's range")],
    )


@claim("study")
def four_dimensions_comparable(ev, study: Study) -> Claim | None:
    """§5.3: the 4D MSE with only Θ≤2 measured is already comparable with 3D's."""
    d = regimes(study)
    if d is None or ("3D", "partial") not in d.index or ("4D", "partial") not in d.index:
        return None
    m3, m4 = d.loc[("3D", "partial"), "mse"], d.loc[("4D", "partial"), "mse"]
    ratio = m4 / m3 if m3 else math.inf
    return Claim(
        "TestifAI",
        "§5.3",
        "The 4D MSE with only first- and second-order data is already comparable with 3D",
        study.name,
        f"MSE with exactly Θ≤2 measured: 3D {m3:.4f}, 4D {m4:.4f} ({ratio:.1f}×)",
        [within("comparable", ratio <= COMPARABLE, f"{ratio:.1f}×, tolerance {COMPARABLE:g}×")],
        study.order_errors() if ratio > COMPARABLE else "",
    )
