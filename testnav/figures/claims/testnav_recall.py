"""TestNav §4.2–4.3: how much of Θ TestNav evaluates to recover P*, how much earlier than the
baselines, and the single-objective ablations (δ only, ρ only) against it."""

from __future__ import annotations

import numpy as np

from ..loader import method_label
from .evidence import Evidence, mean_sd, scope_name
from .papers import BASE
from .registry import claim
from .rules import SHORT, TOL_VALUE, Claim, Part, beats, missing, wider, within

RECOVERY = (35.8, 89.3)  # §4.2: the share of Θ (%) TestNav evaluates to reach full recall
EARLIER = 2.15  # §4.2: up to this many times earlier than a baseline
ABLATIONS = ("delta_only", "rho_only")


def testnav_columns(ev: Evidence) -> list[tuple[str, str, int, np.ndarray]]:
    """(benchmark, fidelity, |Θ|, TestNav's unique configurations to full recall over seeds) of each
    column with TestNav runs and a known |Θ|."""
    out = []
    for b, f in ev.cols():
        n = ev.space(b, f)
        if len(ev.values(b, f, "nsga2")) and n is not None:
            out.append((b, f, n, ev.values(b, f, "nsga2", "unique_to_full_recall")))
    return out


def reached(u: np.ndarray) -> bool:
    """Every seed reached full recall."""
    return bool(len(u)) and not np.isnan(u).any()


@claim("once")
def recovery_share(ev: Evidence) -> Claim:
    """§4.2, Abstract: TestNav recovers P* evaluating 35.8–89.3% of Θ."""
    lo, hi = RECOVERY
    cols = testnav_columns(ev)
    scope = ", ".join(scope_name(b, f) for b, f, _, _ in cols) or "—"
    statement = f"TestNav recovers P* evaluating {lo}%–{hi}% of Θ"
    if not cols:
        return Claim("TestNav", "§4.2, Abstract", statement, scope, "—", missing("no TestNav runs"))
    parts, said = [], []
    for b, f, n, u in cols:
        name = scope_name(b, f)
        if not reached(u):
            parts.append(Part(name, SHORT, "not every seed reaches full recall"))
            said.append(f"{name} not every seed reaches full recall")
            continue
        mean, worst = 100 * u.mean() / n, 100 * u.max() / n
        parts.append(within(name, lo <= mean <= hi, f"mean {mean:.1f}%, the paper's range {lo}%–{hi}%"))
        said.append(f"{name} mean {mean:.1f}% (worst seed {worst:.1f}%)")
    measured = "unique configurations to full recall, share of Θ: " + "; ".join(said)
    return Claim("TestNav", "§4.2, Abstract", statement, scope, measured, parts)


@claim("once")
def earlier(ev: Evidence) -> Claim:
    """§4.2, Abstract: up to 2.15× earlier than the baselines that also reach Recall@P* = 1."""
    cols = testnav_columns(ev)
    scope = ", ".join(scope_name(b, f) for b, f, _, _ in cols) or "—"
    statement = f"TestNav recovers P* up to {EARLIER}× earlier than baselines that also reach Recall@P* = 1"
    ratios = []
    for b, f, _, u in cols:
        for s in BASE[1:] if reached(u) else ():
            us = ev.values(b, f, s, "unique_to_full_recall")
            if reached(us):
                ratios.append(
                    (
                        b,
                        f,
                        s,
                        us.mean() / u.mean(),
                        beats(f"{scope_name(b, f)}: TestNav before {method_label(s)}", us, u),
                    )
                )
    if not ratios:
        what = "no baseline reaches full recall in every seed (or no TestNav run does)"
        return Claim("TestNav", "§4.2, Abstract", statement, scope, "—", missing(what))
    best = max(ratios, key=lambda r: r[3])
    parts = [p for *_, p in ratios]
    parts.append(
        within(
            f"up to {EARLIER}×",
            best[3] <= EARLIER,
            f"largest {best[3]:.2f}×, at most the paper's {EARLIER}×",
            core=False,
        )
    )
    measured = "ratio of mean unique configurations to full recall: " + "; ".join(
        f"{scope_name(b, f)} {method_label(s)} {x:.2f}×" for b, f, s, x, _ in ratios
    )
    return Claim("TestNav", "§4.2, Abstract", statement, scope, measured, parts)


def range_parts(name: str, s: str, a: np.ndarray, t: np.ndarray, lo, hi, gap) -> list[Part]:
    """An ablation's stated range of AUC on one column, and its stated gap to TestNav."""
    d, m = t.mean() - a.mean(), a.mean()
    parts = [
        within(
            f"{name}: in the range",
            lo - TOL_VALUE <= m <= hi + TOL_VALUE,
            f"mean {m:.3f}, range {lo}–{hi} ± {TOL_VALUE}",
            core=False,
        )
    ]
    if s == "delta_only":
        parts.append(
            within(
                f"{name}: gap at most {gap}", d <= gap + TOL_VALUE, f"gap {d:+.3f}, tolerance {TOL_VALUE}", core=False
            )
        )
        parts.append(beats(f"{name}: below TestNav", t, a, core=False))
    else:
        parts.append(
            within(
                f"{name}: within {gap}", abs(d) <= gap + TOL_VALUE, f"gap {d:+.3f}, tolerance {TOL_VALUE}", core=False
            )
        )
    return parts


def ablation_range(ev: Evidence, s: str, lo: float, hi: float, gap: float) -> Claim:
    """§4.3, Fig. 3: the ablation's AUC range and its gap to TestNav, on every column with runs of both."""
    word = f"up to {gap} below TestNav" if s == "delta_only" else f"within {gap} of TestNav"
    statement = f"{method_label(s)} AUC ranges from {lo} to {hi}, {word}"
    rows, parts = [], []
    for b, f in ev.cols():
        a, t = ev.values(b, f, s), ev.values(b, f, "nsga2")
        if not len(a) or not len(t):
            continue
        rows.append(f"{scope_name(b, f)} {mean_sd(a)} (TestNav − it {t.mean() - a.mean():+.3f})")
        parts += range_parts(scope_name(b, f), s, a, t, lo, hi, gap)
    if not rows:
        return Claim("TestNav", "§4.3, Fig. 3", statement, "—", "—", missing(f"no {method_label(s)} runs"))
    scope = ", ".join(scope_name(b, f) for b, f in ev.cols())
    return Claim("TestNav", "§4.3, Fig. 3", statement, scope, "mean ± sd over seeds: " + "; ".join(rows), parts)


@claim("once")
def delta_only_range(ev: Evidence) -> Claim:
    return ablation_range(ev, "delta_only", 0.185, 0.384, 0.545)


@claim("once")
def rho_only_range(ev: Evidence) -> Claim:
    return ablation_range(ev, "rho_only", 0.612, 0.771, 0.085)


def against_testnav(ev: Evidence, statement: str, part) -> Claim:
    """A claim about both ablations against TestNav: `part(name, label, ablation AUCs, TestNav AUCs)`
    on each column and ablation with runs of both."""
    rows, parts = [], []
    for b, f in ev.cols():
        t = ev.values(b, f, "nsga2")
        for s in ABLATIONS:
            a = ev.values(b, f, s)
            if not len(a) or not len(t):
                continue
            rows.append(f"{scope_name(b, f)} {method_label(s)} {mean_sd(a)} vs TestNav {mean_sd(t)}")
            parts.append(part(scope_name(b, f), method_label(s), a, t))
    if not parts:
        return Claim("TestNav", "§4.3, Fig. 3", statement, "—", "—", missing("no runs of TestNav and an ablation"))
    scope = ", ".join(scope_name(b, f) for b, f in ev.cols())
    return Claim(
        "TestNav", "§4.3, Fig. 3", statement, scope, "AUC-Recall, mean ± sd over seeds: " + "; ".join(rows), parts
    )


@claim("once")
def ablations_recover_less(ev: Evidence) -> Claim:
    return against_testnav(
        ev,
        "Both single-objective ablations recover substantially less of P* than TestNav",
        lambda name, label, a, t: beats(f"{name}: TestNav > {label}", t, a, core=False),
    )


@claim("once")
def ablations_vary_more(ev: Evidence) -> Claim:
    return against_testnav(
        ev,
        "Both ablations show wider variance bands than TestNav (lower stability across seeds)",
        lambda name, label, a, t: wider(f"{name}: {label} wider than TestNav", a, t, core=False),
    )
