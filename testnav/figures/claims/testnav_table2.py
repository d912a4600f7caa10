"""TestNav §4.2, Table 2: the AUC-Recall@P* ranking of the four searches, TestNav's margins over the
baselines, and the paper's explanation of where Greedy competes (compact fronts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..loader import method_label
from .evidence import Evidence, mean_sd, scope_name
from .papers import BASE, TABLE2, paper_column
from .registry import claim
from .rules import OK, REVERSED, SHORT, TOL_MARGIN, Claim, Part, beats, fmt_p, fmt_t, missing, side, too_few, welch


def concentration(ev: Evidence, b, f) -> float | None:
    """How concentrated P* is where s = min(δ, ρ) is high: its median member's top-% rank by s over Θ
    (small: a compact front that a scalar search on s finds without exploring broadly, §4.2)."""
    gt = ev.res.truths.get((b, f))
    if gt is None:
        return None
    p = gt.points.iloc[1:]  # θ = 0 is not a candidate
    s = np.minimum(p["delta"].to_numpy(), p["rho"].to_numpy())
    pct = 100 * (1 - pd.Series(s).rank(pct=True).to_numpy())  # top-% rank of each θ by s
    inp = p["in_pstar"].to_numpy()
    return float(np.median(pct[inp])) if inp.any() else None


def curve_at(ev: Evidence, b, f, winner, ref, u: int):
    """(u, mean recall of winner, of ref) after u unique configurations, from the loaded curves."""
    c = ev.res.curves
    if c is None or c.empty:
        return None
    out = []
    for s in (winner, ref):
        g = c[(c["benchmark"] == b) & (c["fidelity"] == f) & (c["search"] == s) & (c["axis"] == "unique")]
        g = g[g["x"] <= u]
        if g.empty:
            return None
        out.append(float(g["mean"].iloc[-1]))
    return u, out[0], out[1]


def scalar_reason(ev: Evidence, b, f, winner: str) -> str:
    """Why a scalar search (Greedy, GA on s = min(δ, ρ)) beats TestNav: how concentrated P* is
    where s is high, and how much of P* each has found at a fixed number of unique configurations."""
    med = concentration(ev, b, f)
    if med is None:
        return "conjecture: P* may be compact in (δ, ρ) here (§4.2's explanation); no ground truth to measure it"
    text = (
        f"P* sits where s = min(δ, ρ) is high: its median member is in the top {med:.0f}% of Θ by s "
        f"(the paper's explanation of Greedy on compact fronts, §4.2)"
    )
    n = ev.space(b, f) or 1296
    at = [curve_at(ev, b, f, winner, "nsga2", n // k) for k in (8, 4)]
    if all(at):
        text += "; mean recall over seeds after " + " and ".join(
            f"u = {u:,} unique configurations: {method_label(winner)} {w:.0%} of P*, TestNav {t:.0%}" for u, w, t in at
        )
    return text


def table2_runs(ev: Evidence, b, f) -> dict[str, np.ndarray]:
    """AUC-Recall over seeds of Table 2's four searches on b · f."""
    return {s: ev.values(b, f, s) for s in BASE}


@claim("column")
def ranking(ev: Evidence, b, f) -> Claim:
    """§4.2, Table 2: the paper's order of the four searches by AUC-Recall, each pair significant."""
    col, vals = paper_column(b, f), table2_runs(ev, b, f)
    scope = scope_name(b, f) + f" ({ev.seeds(b, f)} seeds)"
    absent = [method_label(s) for s in BASE if not len(vals[s])]
    if col is None or absent:
        what = f"no runs of {', '.join(absent)}" if absent else f"no paper column for the fidelity {f}"
        statement = "AUC-Recall@P* ranking of TestNav, Greedy, GA and Random"
        return Claim("TestNav", "§4.2, Table 2", statement, scope, "—", missing(what))
    paper = TABLE2[col]
    p_order = sorted(BASE, key=lambda s: -paper[s])
    m_order = sorted(BASE, key=lambda s: -vals[s].mean())
    parts = [
        beats(f"{method_label(a)} > {method_label(c)}", vals[a], vals[c])
        for i, a in enumerate(p_order)
        for c in p_order[i + 1 :]
    ]
    lead = m_order[0]
    note = ""
    if lead in ("greedy", "ga") and beats("", vals[lead], vals["nsga2"]).outcome == OK:
        note = scalar_reason(ev, b, f, lead)
    return Claim(
        "TestNav",
        f"§4.2, Table 2 ({col[0]} · {col[1]})",
        " > ".join(f"{method_label(s)} {paper[s]:.3f}" for s in p_order),
        scope,
        "mean ± sd over seeds: " + " > ".join(f"{method_label(s)} {mean_sd(vals[s])}" for s in m_order),
        parts,
        note,
    )


def margin(paper: dict, vals: dict, s: str) -> tuple[str, Part]:
    """TestNav's relative AUC margin over baseline s, the paper's against the one measured here."""
    pm = 100 * (paper["nsga2"] - paper[s]) / paper[s]
    hm = 100 * (vals["nsga2"].mean() - vals[s].mean()) / vals[s].mean()
    said = f"vs {method_label(s)} {pm:+.0f}% (here {hm:+.0f}%)"
    w = welch(vals["nsga2"], vals[s])
    name = f"{pm:+.0f}% vs {method_label(s)}"
    if w is None:
        return said, too_few(name, core=False)
    close = abs(hm - pm) <= TOL_MARGIN

    def decide(q: float) -> tuple[str, str]:
        up = side(w[0], q)
        return (REVERSED if up == REVERSED else OK if up == OK and close else SHORT), ""

    return said, Part(
        name,
        decide(w[1])[0],
        f"here {hm:+.0f}%, tolerance ±{TOL_MARGIN:.0f} points; TestNav above it: Welch t = {fmt_t(w[0])}, {fmt_p(w[1])}",
        core=False,
        p=w[1],
        decide=decide,
    )


@claim("column")
def margins(ev: Evidence, b, f) -> Claim | None:
    """§4.2: the margins the paper states in words for its vision SSIM column, and those Table 2
    implies for the others (no row where `ranking` names what is missing)."""
    col, vals = paper_column(b, f), table2_runs(ev, b, f)
    if col is None or not all(len(v) for v in vals.values()):
        return None
    said = [margin(TABLE2[col], vals, s) for s in BASE[1:]]
    return Claim(
        "TestNav",
        f"§4.2 ({col[0]} · {col[1]})"
        + (": TestNav 38% above Random, 26% above Greedy" if col == ("tiny_imagenet", "ssim") else ": from Table 2"),
        "TestNav's relative AUC margin over each baseline",
        scope_name(b, f) + f" ({ev.seeds(b, f)} seeds)",
        "means over seeds: " + "; ".join(m for m, _ in said),
        [p for _, p in said],
    )


@claim("benchmark")
def fronts(ev: Evidence, b) -> Claim:
    """§4.2: Pareto search helps on broad fronts, Greedy is competitive on compact ones."""
    statement = (
        "Pareto search helps when P* is broad; Greedy is competitive (higher AUC than TestNav) when P* is "
        "compact, concentrated where s = min(δ, ρ) is high"
    )
    fids = [f for bb, f in ev.cols() if bb == b and len(ev.values(bb, f, "nsga2")) and len(ev.values(bb, f, "greedy"))]
    conc = {f: concentration(ev, b, f) for f in fids}
    conc = {f: c for f, c in conc.items() if c is not None}
    if len(conc) < 2:
        what = "fewer than two fronts of one benchmark with TestNav and Greedy runs"
        return Claim("TestNav", "§4.2", statement, b, "—", missing(what))
    compact, broad = min(conc, key=conc.get), max(conc, key=conc.get)
    if conc[compact] == conc[broad]:
        return Claim("TestNav", "§4.2", statement, b, "—", missing("the fronts are equally concentrated"))
    t = {f: ev.values(b, f, "nsga2") for f in (compact, broad)}
    g = {f: ev.values(b, f, "greedy") for f in (compact, broad)}
    return Claim(
        "TestNav",
        "§4.2",
        statement,
        ", ".join(scope_name(b, f) for f in (broad, compact)),
        "median member of P* in the top "
        + ", ".join(f"{conc[f]:.0f}% of Θ by s under {f}" for f in (broad, compact))
        + "; mean AUC over seeds: "
        + "; ".join(f"{f} TestNav {t[f].mean():.3f}, Greedy {g[f].mean():.3f}" for f in (broad, compact)),
        [
            beats(f"broader front ({b} · {broad}): TestNav > Greedy", t[broad], g[broad], core=False),
            beats(f"more compact front ({b} · {compact}): Greedy > TestNav", g[compact], t[compact], core=False),
        ],
    )
