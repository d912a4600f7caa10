"""Whether a finding holds in every order of composition (issue 75, item 2).

Families are applied in list order (θ's first family first); a configuration of several families can
cost far more in one order than in another (contrast halved, then shot noise, against the reverse). For
each reported finding (the interactions a summary shows and every failure mode) the other orders of its
families are measured on the model: all of them up to three families (at most five others), a sample of
`ScanSpec.orders` beyond, drawn from the scan's seed. Each other order's per-input outcomes are compared
with the list order's by McNemar's exact test (statsmodels) at 1 − the scan's confidence, Holm over the
orders of one finding: the
finding *needs its order* when some other order is significantly more accurate, and is reported with
that order and both accuracies; otherwise it *holds in every order measured*.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd

from ..core.naming import family_names

REPORTED_INTERACTIONS = 3  # the interactions a summary shows (Findings.text), the ones checked
COLUMNS = ("orders_measured", "in_every_order", "other_order", "other_order_accuracy")


def other_orders(active, sample: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """The orders of the family indices `active` other than list order: all of them for up to three
    families, else `sample` of them drawn without replacement (in a fixed order)."""
    others = [p for p in permutations(int(a) for a in active) if list(p) != sorted(p)]
    if len(active) <= 3 or len(others) <= sample:
        return others
    return [others[i] for i in sorted(rng.choice(len(others), size=sample, replace=False))]


def order_text(order, names) -> str:
    return " → ".join(names[i] for i in order)


def mcnemar_p(listed: np.ndarray, other: np.ndarray) -> float:
    """Two-sided exact McNemar p-value of two paired outcome vectors."""
    from statsmodels.stats.contingency_tables import mcnemar

    b, c = int((listed & ~other).sum()), int((~listed & other).sum())
    return 1.0 if b + c == 0 else float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)


def check(session, theta, listed: np.ndarray, sample: int, rng, alpha: float) -> dict:
    """The composition columns of one finding at θ, whose list-order outcomes are `listed`."""
    from statsmodels.stats.multitest import multipletests

    names = family_names(session.benchmark.families)
    orders = other_orders(np.flatnonzero(theta), sample, rng)
    if not orders:
        return {"orders_measured": 0, "in_every_order": True, "other_order": "", "other_order_accuracy": np.nan}
    outcomes = [session.inputs.correct_in_order(theta, o) for o in orders]
    p = multipletests([mcnemar_p(listed, o) for o in outcomes], alpha=alpha, method="holm")[1]
    better = [k for k in range(len(orders)) if p[k] < alpha and outcomes[k].mean() > listed.mean()]
    shown = max(better or range(len(orders)), key=lambda k: abs(outcomes[k].mean() - listed.mean()))
    return {
        "orders_measured": len(orders),
        "in_every_order": not better,
        "other_order": order_text(orders[shown], names),
        "other_order_accuracy": float(outcomes[shown].mean()),
    }


def annotate(findings, measured, sample: int, seed: int) -> None:
    """Add COLUMNS to the findings' interactions and failure modes: the reported ones' other orders
    measured on the findings' session (NaN where not checked; `sample` 0: none are), each tested at
    1 − the findings' confidence."""
    session, alpha = findings.session, 1 - findings.confidence
    measure = bool(sample) and session is not None and session.readable
    rng = np.random.default_rng([seed, 75])
    lattice = measured.lattice
    row_of = {int(i): k for k, i in enumerate(measured.index)}
    cols = [f"t{i + 1}" for i in range(lattice.n)]
    for name in ("interactions", "failure_modes"):
        df = getattr(findings, name)
        values = {c: pd.Series(np.nan, index=df.index, dtype=object) for c in COLUMNS}
        for k in (reported(df) if name == "interactions" else df.index) if measure else ():
            theta = df.loc[k, cols].to_numpy(np.int64)
            listed = measured.correct[row_of[int(lattice.index(theta))]]
            for c, v in check(session, theta, listed, sample, rng, alpha).items():
                values[c][k] = v
        setattr(findings, name, df.assign(**values))


def reported(interactions: pd.DataFrame) -> pd.Index:
    """The interactions a summary shows: significant and minimal, the first REPORTED_INTERACTIONS."""
    if not len(interactions):
        return interactions.index
    shown = interactions[interactions["significant"].astype(bool) & interactions["minimal"].astype(bool)]
    return shown.index[:REPORTED_INTERACTIONS]
