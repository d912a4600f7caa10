"""TestifAI's query errors (§5.2.2, Fig. 6) and the aggregate errors of third- and fourth-order
outcomes (§9), on each study's queries.csv and per-test errors."""

from __future__ import annotations

import pandas as pd

from .evidence import Study, aggregate, by_order, dims, orthants
from .registry import claim
from .rules import AGGREGATE, UNDECIDED, Claim, Part, within

Q8 = 0.109  # §5.2.2: Q8's error, the largest the paper reports


def worst_query(q: pd.DataFrame):
    return q.loc[q.error.abs().idxmax()]


def query_reason(worst, pt) -> str:
    said = f"the largest error is {worst['query']}'s ({worst.error:+.3f})"
    if "m" in worst and "l" in worst:
        said += f", over {int(worst['m'])} measured and {int(worst['l'])} inferred tests"
    if pt is not None:
        said += "; per test (3D) " + by_order(pt[pt.tomography == "3D"], "abs_error")
    return said


@claim("study")
def queries_low(ev, study: Study) -> Claim:
    """§5.2.2, Fig. 6: errors stay low across Q1–Q12; Q8 errs by at most 0.109."""
    q = study.queries
    if q is None:
        return study.lacking("§5.2.2, Fig. 6", "Query errors stay low for Q1–Q12")
    worst = worst_query(q)
    q8 = q[q["query"] == "Q8"]
    largest = abs(worst.error)
    parts = [
        within(
            f"every query within {Q8}",
            largest <= Q8,
            f"largest |R̂ − R| {largest:.3f} ({worst['query']}), bound: the paper's Q8 error",
        )
    ]
    if len(q8):
        parts.append(within(f"Q8 within {Q8}", abs(q8.error.iloc[0]) <= Q8, f"Q8 {q8.error.iloc[0]:+.3f}", core=False))
    return Claim(
        "TestifAI",
        "§5.2.2, Fig. 6",
        f"Estimation errors remain consistently low across Q1–Q12; Q8 (third-order tests only, all unseen) errs by at most {Q8}",
        study.name,
        f"max |R̂ − R| {largest:.3f} ({worst['query']})" + (f"; Q8 {q8.error.iloc[0]:+.3f}" if len(q8) else ""),
        parts,
        "" if largest <= Q8 else query_reason(worst, study.per_test),
    )


def by_order_errors(worst, pt) -> tuple[list, list]:
    """(third-order, fourth-order) aggregate errors |R̂(Q) − R(Q)|, named: the largest of Q1–Q12 and
    each tomography's Θ3; each 4D tomography's Θ4, all of Θ and its largest orthant query."""
    third = [(f"3D Q1–Q12 (largest, {worst['query']})", abs(float(worst.error)))]
    fourth = []
    for label, d in pt.groupby("tomography", sort=False) if pt is not None else ():
        third += [(f"{label} Θ3", abs(aggregate(d[d.order == 3])))] if (d.order == 3).any() else []
        if dims(label) >= 4:
            fourth += [(f"{label} Θ4", abs(aggregate(d[d.order == 4]))), (f"{label} all of Θ", abs(aggregate(d)))]
            orth = orthants(d)
            if orth:
                k, e = max(orth, key=lambda x: abs(x[1]))
                fourth.append((f"{label} {len(orth)} orthant queries (largest, {k})", abs(e)))
    return third, fourth


@claim("study")
def aggregate_error(ev, study: Study) -> Claim | None:
    """§9: third- and fourth-order outcomes with less than 7% aggregate estimation error."""
    if study.queries is None:
        return None
    third, fourth = by_order_errors(worst_query(study.queries), study.per_test)
    parts = [
        within(
            name,
            max(e for _, e in got) < AGGREGATE,
            ", ".join(f"{k} {e:.3f}" for k, e in got) + f"; bound {AGGREGATE}",
            core=False,
        )
        for name, got in (("third-order", third), ("fourth-order", fourth))
        if got
    ]
    if not fourth:
        parts.append(Part("fourth-order", UNDECIDED, "no 4D tomography in the study", core=False))
    return Claim(
        "TestifAI",
        "§9",
        "Third- and fourth-order outcomes are predicted with less than 7% aggregate estimation error",
        study.name,
        "|R̂(Q) − R(Q)|: " + "; ".join(f"{k} {e:.3f}" for k, e in third + fourth),
        parts,
        "" if not fourth or max(e for _, e in fourth) < AGGREGATE else study.order_errors(),
    )
