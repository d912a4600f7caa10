"""TestNav §4.4, Fig. 4: the input-level signals (coverage, uncertainty, surprise) against TestNav in
final Recall@P*."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..loader import method_label
from .evidence import Evidence, mean_sd, scope_name
from .papers import SIGNALS, paper_column
from .registry import claim
from .rules import ALPHA, OK, REVERSED, TOL_VALUE, UNDECIDED, Claim, Part, beats, matches, missing, within


def signal_correlations(ev: Evidence, b, f, names) -> dict[str, tuple[float, float]]:
    """name -> Spearman correlation of its column with (δ, ρ) over Θ, from the ground truth table."""
    gt = ev.res.truths.get((b, f))
    if gt is None or not Path(gt.path).exists():
        return {}
    try:
        cols = list(names)
        df = (
            pd.read_parquet(gt.path, columns=[*cols, "delta", *[f"t{i + 1}" for i in range(gt.n)]])
            if str(gt.path).endswith(".parquet")
            else pd.read_csv(gt.path)
        )
    except Exception:
        return {}
    t = [f"t{i + 1}" for i in range(gt.n)]
    merged = gt.points[[*t, "delta", "rho"]].merge(df[[*t, *[c for c in cols if c in df]]], on=t)
    return {
        c: (
            float(merged[c].corr(merged["delta"], method="spearman")),
            float(merged[c].corr(merged["rho"], method="spearman")),
        )
        for c in cols
        if c in merged
    }


def signal_runs(ev: Evidence, b, f):
    """(final recall over seeds of each signal with runs, TestNav's, the signals best first, their
    means) on b · f; None without runs of both."""
    fr = {s: ev.values(b, f, s, "final_recall") for s in SIGNALS}
    fr = {s: v for s, v in fr.items() if len(v)}
    t = ev.values(b, f, "nsga2", "final_recall")
    if not fr or not len(t):
        return None
    mean = {s: float(v.mean()) for s, v in fr.items()}
    return fr, t, sorted(fr, key=lambda s: -mean[s]), mean


def metric(b, f) -> str:
    """The fidelity of the paper's column b · f is compared with (f itself without one)."""
    col = paper_column(b, f)
    return col[1] if col else f


def under_ssim(ev: Evidence, b, f):
    """`signal_runs` where §4.4's SSIM statements apply (an SSIM column, or a metric the paper has no
    column for, not KID) and KMNC has runs; else None."""
    runs = signal_runs(ev, b, f)
    ssim = metric(b, f) == "ssim" or (paper_column(b, f) is None and f != "kid")
    return runs if runs is not None and ssim and "kmnc" in runs[0] else None


def at(name: str, value: float, paper: float) -> Part:
    return within(name, abs(value - paper) <= TOL_VALUE, f"mean {value:.3f}, tolerance ±{TOL_VALUE}", core=False)


@claim("column")
def none_matches_testnav(ev: Evidence, b, f) -> Claim | None:
    """§4.4, Fig. 4: no input-level metric matches TestNav in final Recall@P*."""
    runs = signal_runs(ev, b, f)
    if runs is None:
        col = paper_column(b, f)
        if col and col[1] in ("ssim", "kid"):
            what = "no signal runs (the benchmark defines no signals)"
            return Claim(
                "TestNav", "§4.4, Fig. 4", "Input-level signals against TestNav", scope_name(b, f), "—", missing(what)
            )
        return None
    fr, t, ordered, _ = runs
    listing = ", ".join(f"{method_label(s)} {mean_sd(fr[s])}" for s in ordered)
    return Claim(
        "TestNav",
        "§4.4, Fig. 4",
        "No input-level metric matches TestNav in final Recall@P*",
        scope_name(b, f),
        f"final recall, mean ± sd over seeds: TestNav {mean_sd(t)}; {listing}",
        [beats(f"TestNav > {method_label(s)}", t, fr[s]) for s in ordered],
    )


@claim("column")
def kmnc_best_under_ssim(ev: Evidence, b, f) -> Claim | None:
    """§4.4: under SSIM, KMNC is the best signal at 0.900 (TestNav 0.993)."""
    runs = under_ssim(ev, b, f)
    if runs is None:
        return None
    fr, t, ordered, mean = runs
    top, k = ordered[0], mean["kmnc"]
    parts = [beats(f"KMNC > {method_label(s)}", fr["kmnc"], fr[s]) for s in ordered if s != "kmnc"]
    parts += [at("KMNC at 0.900", k, 0.900), at("TestNav at 0.993", t.mean(), 0.993)]
    note = ""
    if top != "kmnc":
        corr = signal_correlations(ev, b, f, SIGNALS)
        if top in corr and "kmnc" in corr:
            note = (
                f"Spearman correlation with (δ, ρ) over Θ: {method_label(top)} ({corr[top][0]:+.2f}, {corr[top][1]:+.2f}), "
                f"KMNC ({corr['kmnc'][0]:+.2f}, {corr['kmnc'][1]:+.2f})"
            )
    return Claim(
        "TestNav",
        "§4.4",
        "Under SSIM, KMNC is the best signal, at 0.900 final recall (TestNav 0.993)",
        scope_name(b, f),
        f"final recall, mean over seeds: best {method_label(top)} {mean[top]:.3f}; KMNC {k:.3f}; TestNav {t.mean():.3f}",
        parts,
        note,
    )


def among_weakest(fr: dict, mean: dict, s: str, paper: float) -> list[Part]:
    """Signal s is among the two weakest (at most one other significantly weaker), at the paper's value."""
    name = f"{method_label(s)} among the two weakest"
    if s not in fr:
        return [Part(name, UNDECIDED, "no runs", core=False)]
    weaker = [o for o in fr if o != s and beats("", fr[s], fr[o]).outcome == OK]
    evidence = f"significantly weaker than it (Welch, α = {ALPHA}): " + (
        ", ".join(method_label(o) for o in weaker) or "none"
    )
    return [
        Part(name, OK if len(weaker) <= 1 else REVERSED, evidence, core=False),
        at(f"{method_label(s)} at {paper}", mean[s], paper),
    ]


@claim("column")
def weakest_under_ssim(ev: Evidence, b, f) -> Claim | None:
    """§4.4: under SSIM, TKNC (0.496) and LSA (0.581) are the weakest signals."""
    runs = under_ssim(ev, b, f)
    if runs is None:
        return None
    fr, _, ordered, mean = runs
    parts = among_weakest(fr, mean, "tknc", 0.496) + among_weakest(fr, mean, "lsa", 0.581)
    corr = signal_correlations(ev, b, f, SIGNALS)
    weakest = ordered[-2:]
    note = "weakest here: " + ", ".join(
        method_label(s) + (f" (Spearman with ρ over Θ {corr[s][1]:+.2f})" if s in corr else "") for s in weakest
    )
    return Claim(
        "TestNav",
        "§4.4",
        "Under SSIM, TKNC (0.496) and LSA (0.581) are the weakest signals",
        scope_name(b, f),
        "final recall, mean over seeds: weakest "
        + ", ".join(f"{method_label(s)} {mean[s]:.3f}" for s in reversed(weakest)),
        parts,
        note,
    )


@claim("column")
def kmnc_matches_under_kid(ev: Evidence, b, f) -> Claim | None:
    """§4.4: under KID, TestNav reaches 0.993 final recall, matched by KMNC."""
    runs = signal_runs(ev, b, f)
    if runs is None or metric(b, f) != "kid" or "kmnc" not in runs[0]:
        return None
    fr, t, _, _ = runs
    ka, ta = ev.values(b, f, "kmnc"), ev.values(b, f, "nsga2")
    corr = signal_correlations(ev, b, f, ["kmnc"])
    note = f"KMNC's AUC {ka.mean():.3f} against TestNav's {ta.mean():.3f} (means over seeds)"
    if "kmnc" in corr:
        note += f"; KMNC's Spearman correlation with (δ, ρ) over Θ ({corr['kmnc'][0]:+.2f}, {corr['kmnc'][1]:+.2f})"
    return Claim(
        "TestNav",
        "§4.4",
        "Under KID, TestNav reaches 0.993 final recall, matched by KMNC (0.993)",
        scope_name(b, f),
        f"final recall, mean ± sd over seeds: TestNav {mean_sd(t)}, KMNC {mean_sd(fr['kmnc'])}",
        [matches("KMNC matches TestNav", fr["kmnc"], t), at("TestNav at 0.993", t.mean(), 0.993)],
        note,
    )
