"""TestifAI §5.3, Figs. 7–8: ordered sampling against random sampling (held-out MSE over repetitions,
ordered_vs_random.csv), 4D against 3D, and what third-order tests add (§7)."""

from __future__ import annotations

import math

import pandas as pd

from .evidence import Study, dims, low_order_tests
from .registry import claim
from .rules import OK, UNDECIDED, Claim, Part, beats, below, missing, wider


def sizes(ovr: pd.DataFrame) -> list[tuple]:
    """(tomography, fraction, n tests, ordered MSEs, random MSEs) at each size below all of Θ with
    repetitions of both strategies."""
    out = []
    for (label, frac), g in ovr.groupby(["tomography", "fraction"]):
        o, r = g[g.strategy == "ordered"].mse, g[g.strategy == "random"].mse
        if frac >= 1.0 or not len(o) or not len(r):
            continue
        out.append((label, frac, int(g.tests.iloc[0]), o, r))
    return out


def repetitions(ovr: pd.DataFrame) -> int:
    return int(ovr.groupby(["tomography", "strategy", "fraction"]).size().min())


def size_name(label, frac, n) -> str:
    return f"{label} {frac:.0%} (n = {n})"


def ordered_holds(label, frac, ovr) -> str:
    """What ordered sampling holds at a size below Θ≤2: Θ≤1 and part of Θ2, no pair fully."""
    sub = ovr[(ovr.tomography == label) & (ovr.fraction == frac)]
    if sub.empty:
        return ""
    n, k = int(sub.tests.iloc[0]), dims(label)
    levels = round(int(ovr[ovr.tomography == label].tests.max()) ** (1 / k))
    first = sum(math.comb(k, j) * (levels - 1) ** j for j in range(2))
    if n >= low_order_tests(label, ovr):
        return ""
    return f"{label} {frac:.0%} (n = {n}) holds only Θ≤1 ({first} tests) and {n - first} of Θ2, no pair fully"


@claim("study")
def ordered_beats_random(ev, study: Study) -> Claim:
    """§5.3, Figs. 7–8: ordered sampling has the lower held-out MSE at every size, 3D and 4D."""
    ovr = study.ordered
    if ovr is None:
        return study.lacking("§5.3, Figs. 7–8", "Ordered sampling consistently outperforms random")
    parts, shown, small = [], [], []
    for label, frac, n, o, r in sizes(ovr):
        name = size_name(label, frac, n)
        parts.append(beats(f"{name}: ordered < random", r, o, "repetitions"))
        shown.append(f"{name} {o.mean():.4f} vs {r.mean():.4f}")
        if parts[-1].outcome != OK:
            small.append(ordered_holds(label, frac, ovr))
    note = "; ".join(x for x in small if x)
    return Claim(
        "TestifAI",
        "§5.3, Figs. 7–8",
        "Across 3D and 4D, ordered sampling consistently outperforms random sampling (lower held-out MSE)",
        study.name,
        f"held-out MSE, ordered vs random, mean over {repetitions(ovr)} repetitions: " + "; ".join(shown),
        parts,
        "ordered sampling at " + note if note else "",
    )


@claim("study")
def random_varies_more(ev, study: Study) -> Claim | None:
    """§5.3: random sampling varies more than ordered, especially at small sizes (those before ordered
    sampling holds all of Θ≤2)."""
    ovr = study.ordered
    if ovr is None:
        return None
    wide = [
        wider(f"{size_name(label, frac, n)}: random varies more", r, o, "repetitions")
        for label, frac, n, o, r in sizes(ovr)
        if n < low_order_tests(label, ovr)
    ]
    return Claim(
        "TestifAI",
        "§5.3",
        "Random sampling exhibits greater variance than ordered sampling, especially at small sample sizes",
        study.name,
        f"sd of held-out MSE over {repetitions(ovr)} repetitions at the sizes before ordered sampling holds all of Θ≤2",
        wide if wide else missing("no size below Θ≤2"),
    )


@claim("study")
def higher_dimension_lower_mse(ev, study: Study) -> Claim | None:
    """§5.3: at the same sampling percentage, 4D has a lower MSE than 3D."""
    ovr = study.ordered
    if ovr is None:
        return None
    agg = ovr[ovr.strategy == "ordered"]
    labels = sorted(agg.tomography.unique(), key=dims)
    if len(labels) < 2:
        return None
    lo_, hi_ = labels[0], labels[-1]
    parts = []
    for frac in sorted(agg.fraction.unique()):
        if frac >= 1.0:
            continue
        a = agg[(agg.tomography == lo_) & (agg.fraction == frac)].mse
        c = agg[(agg.tomography == hi_) & (agg.fraction == frac)].mse
        if len(a) and len(c):
            parts.append(beats(f"{frac:.0%}: {hi_} < {lo_}", a, c, "repetitions"))
    return Claim(
        "TestifAI",
        "§5.3",
        "At the same sampling percentage the 4D setting consistently achieves lower MSE than 3D",
        study.name,
        f"ordered held-out MSE, mean over {repetitions(ovr)} repetitions, {hi_} vs {lo_} at {len(parts)} percentages below 100%",
        parts,
    )


def past_low_order(label, d: pd.DataFrame, o: pd.DataFrame) -> tuple[Part, str | None]:
    """One tomography: the ordered curve's first size past Θ≤2 (Θ≤2 and some Θ3) against the Θ≤2-only
    forest on held-out tests of the same orders, and the row's words for it."""
    counts = d.groupby("order").size()
    le2 = int(counts[counts.index <= 2].sum())
    past = sorted(int(x) for x in o.tests.unique() if le2 < x < len(d))
    if not past or 3 not in counts.index:
        return Part(label, UNDECIDED, "no ordered size between Θ≤2 and all of Θ", core=False), None
    n = past[0]
    held, rest = {}, n  # per order, the tests ordered sampling leaves out at n
    for k, c in counts.sort_index().items():
        took = min(int(c), max(rest, 0))
        rest -= took
        if c - took:
            held[int(k)] = int(c - took)
    mse = d.assign(se=d.error**2).groupby("order").se.mean()
    ref = sum(mse[k] * h for k, h in held.items()) / sum(held.values())
    added = n - le2
    part = below(f"{label}: Θ≤2 + {added} Θ3 tests beats Θ≤2 alone", o[o.tests == n].mse, float(ref), core=False)
    said = (
        f"{label}: n = {n} ({added} Θ3 tests added) {o[o.tests == n].mse.mean():.4f} vs the Θ≤2 forest's {ref:.4f} "
        "on held-out tests of the same orders (" + ", ".join(f"{h} of Θ{k}" for k, h in held.items()) + ")"
    )
    return part, said


@claim("study")
def third_order(ev, study: Study) -> Claim | None:
    """§5.3/§7: third-order data further improves the estimate."""
    pt, ovr = study.per_test, study.ordered
    if pt is None or ovr is None:
        return None
    got = [
        past_low_order(label, d, ovr[(ovr.tomography == label) & (ovr.strategy == "ordered")])
        for label, d in pt.groupby("tomography", sort=False)
    ]
    shown = [s for _, s in got if s]
    return Claim(
        "TestifAI",
        "§5.3, §7",
        "Third-order data further improves the estimate (adding a modest number of Θ3 tests improves prediction)",
        study.name,
        "held-out MSE: " + "; ".join(shown) if shown else "—",
        [p for p, _ in got],
    )
