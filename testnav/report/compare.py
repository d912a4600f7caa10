"""comparison.html: did the new version get less robust? One self-contained page (Comparison.report).

In the order a person asks: the gate's verdict (pass, fail or undecided, with its line), the two measured fronts
side by side and every configuration's accuracy before against after, the regressions with their
p-values, the families and pairs behind them, each regression input by input (the inputs the
baseline got right and the new model gets wrong under it), the improvements, and the whole table.
The style and script are the run report's (testnav/report/template.py); figures and thumbnails are
embedded, nothing is fetched.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.cache import atomic_path
from ..core.naming import COLUMN
from ..plotstyle import GREY, RC, TEAL, plt
from . import plots
from .page import joined, pct, table, text_diff
from .template import page

NAME = "comparison.html"
BAD, GOOD = "#b3261e", "#1b7a43"
MAX_ROWS = 500


def fronts_figure(fronts: pd.DataFrame, rho_label: str) -> str:
    """Both models' measured fronts on one plot: δ (accuracy lost) against ρ."""
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(5.2, 3.6))
        for side, color, ls in (("baseline", GREY, "--"), ("new", TEAL, "-")):
            f = fronts[fronts["model"] == side].sort_values("rho")
            ax.plot(f["rho"], f["delta"], color=color, ls=ls, lw=1.2, marker="o", ms=4, label=f"{side} model")
        ax.set_xlabel(f"fidelity ρ ({rho_label}; right: closer to the clean input)")
        ax.set_ylabel("degradation δ (accuracy lost)")
        ax.legend(loc="best", frameon=False)
        ax.grid(alpha=0.3)
        return plots.figure_uri(fig)


def scatter_figure(t: pd.DataFrame, regression: np.ndarray, improvement: np.ndarray) -> str:
    """Each configuration's accuracy before (x) against after (y); regressions red, improvements green."""
    with plt.rc_context(RC):
        fig, ax = plt.subplots(figsize=(4.4, 3.9))
        rest = ~(regression | improvement)
        ax.scatter(t["before"][rest], t["after"][rest], s=10, color=GREY, label="no significant change", zorder=2)
        ax.scatter(t["before"][regression], t["after"][regression], s=16, color=BAD, label="regression", zorder=3)
        ax.scatter(t["before"][improvement], t["after"][improvement], s=16, color=GOOD, label="improvement", zorder=3)
        lo = float(min(t["before"].min(), t["after"].min(), 1.0))
        ax.plot([lo, 1], [lo, 1], color="#777", lw=0.8, ls=":", zorder=1)
        ax.set_xlabel("accuracy, baseline model")
        ax.set_ylabel("accuracy, new model")
        ax.legend(loc="upper left", frameon=False, fontsize=8)
        ax.grid(alpha=0.3)
        return plots.figure_uri(fig)


def flipped_cards(comparison, theta, k: int) -> tuple[str, int]:
    """Up to k inputs the baseline got right under θ and the new model gets wrong, as cards; and how many there are."""
    base = comparison.base
    row = base.index()[tuple(int(v) for v in theta)]
    before = base.correct[row]
    after = comparison.new.correct[comparison.new.index()[tuple(int(v) for v in theta)]]
    flipped = np.flatnonzero(before & ~after)
    inputs = comparison.inputs
    if inputs is None or not len(flipped):
        return "", len(flipped)
    out = inputs.outcomes(theta)
    x = inputs.perturbed(theta)
    name = inputs.class_name
    cards = []
    for i in flipped[:k]:
        r = out.iloc[int(i)]
        head = (
            f"<div>#{int(i)} label <b>{escape(name(r['label']))}</b> · baseline <span class='right'>right</span>"
            f" → new <span class='wrong'>{escape(name(r['prediction']))}</span></div>"
        )
        if inputs.text:
            left, right = text_diff(
                joined(inputs.shown(inputs.loaded.inputs.items[i])), joined(inputs.shown(x.items[i]))
            )
            cards.append(
                f'<div class="card flip">{head}<p><span class="lbl">clean</span>{left}</p>'
                f'<p><span class="lbl">perturbed</span>{right}</p></div>'
            )
        else:
            clean, pert = inputs.loaded.inputs[i].detach().cpu(), x[i].detach().cpu()
            cards.append(
                f'<div class="card flip"><div class="pair">'
                f'<figure><img alt="input {int(i)} clean" src="{plots.thumbnail(clean)}">clean</figure>'
                f'<figure><img alt="input {int(i)} perturbed" src="{plots.thumbnail(pert)}">perturbed</figure>'
                f"</div>{head}</div>"
            )
    return f'<div class="{"texts" if inputs.text else "strip"}">{"".join(cards)}</div>', len(flipped)


def change_table(df: pd.DataFrame, scroll: bool = False) -> str:
    shown = df[[COLUMN, "before", "after", "change", "worse", "better", "p_value", "p_adjusted", "drop_high"]].rename(
        columns={
            "before": "accuracy before",
            "after": "accuracy after",
            "change": "change",
            "worse": "right → wrong",
            "better": "wrong → right",
            "p_value": "p",
            "p_adjusted": "p adjusted",
            "drop_high": "drop at most",
        }
    )
    signed = lambda v: f"{100 * v:+.1f} pt"  # noqa: E731
    pval = lambda v: f"{v:.2g}"  # noqa: E731
    return table(
        shown.head(MAX_ROWS),
        numeric={"accuracy before", "accuracy after", "change", "right → wrong", "wrong → right", "p", "p adjusted"}
        | {"drop at most"},
        formats={"accuracy before": pct, "accuracy after": pct, "change": signed, "p": pval, "p adjusted": pval}
        | {"drop at most": signed},
        scroll=scroll,
    )


TITLE = "Did the new model get less robust than the baseline?"


def lines(*parts: str) -> str:
    """The non-empty parts, one a line."""
    return "\n".join(p for p in parts if p)


GATE_WORDS = {"pass": "passed", "fail": "FAILED", "undecided": "undecided"}


def header(c, verdict) -> str:
    """The question, what was compared, the links, the gate's verdict and its line (or the warm start's)."""
    base, new = c.base, c.new
    links = [("fronts", "Fronts"), ("regressions", "Regressions"), ("families", "Families")]
    links += [("inputs", "Inputs that flipped"), ("improvements", "Improvements"), ("all", "Every configuration")]
    last = ""
    if verdict is not None:
        cls = {"pass": "", "fail": " fail", "undecided": " undecided"}[verdict.decision]
        line = verdict.line.removeprefix("regression gate undecided: ")
        last = (
            f'<p class="verdict{cls}"><b>Regression gate {GATE_WORDS[verdict.decision]}</b> (max_drop '
            f"{100 * verdict.max_drop:g} points): {escape(line)}</p>"
        )
    elif c.warm is not None:
        last = f"<p>{escape(c.warm.sentence())}.</p>"
    return lines(
        f"<h1>{escape(TITLE)}</h1>",
        f'<p class="sub">baseline model {escape(base.model)} · new model {escape(new.model)} · the same '
        f"{base.inputs:,} inputs (data {escape(base.data)}) · {len(base.families)} families × {base.levels} levels</p>",
        "<nav>" + "".join(f'<a href="#{a}">{escape(w)}</a>' for a, w in links) + "</nav>",
        last,
        f"<p>What changed: {escape(c.sentence())}.</p>",
    )


def facts_section(c) -> str:
    """The settings and counts of the comparison, as a grid of facts."""
    facts = [
        ("clean accuracy", f"{pct(c.base.psi_clean)} → {pct(c.new.psi_clean)}"),
        (
            "configurations compared",
            f"{c.compared:,} (measured on the baseline)"
            + ("" if c.warm is None else f"; {len(c.predicted):,} more predicted (warm start), bounded together"),
        ),
        ("evaluated on the new model", f"{c.evaluations:,} ({c.reused:,} measured before)"),
        ("test", "McNemar's exact test on the paired per-input outcomes"),
        (
            "gate",
            "passes when each configuration's one-sided upper bound on its paired drop (Tango's score) is within "
            "max_drop; fails when a drop beyond it is shown (one-sided, Holm); else undecided",
        ),
        ("correction", f"{c.correction_label} over the {c.compared:,} configurations"),
        (
            "confidence",
            f"{c.confidence:.0%}" + (f", changes beyond {100 * c.min_change:g} points" if c.min_change else ""),
        ),
    ]
    return (
        '<div class="grid">'
        + "".join(f'<div class="fact"><b>{escape(a)}</b>{escape(b)}</div>' for a, b in facts)
        + "</div>"
    )


def fronts_section(c, regressed: np.ndarray, improved: np.ndarray) -> str:
    """The two measured fronts side by side, every configuration before against after, and the fronts' tables."""
    fronts = c.fronts
    figs = []
    if len(fronts):
        figs.append(f'<img class="fig" alt="the two fronts" src="{fronts_figure(fronts, c.base.fidelity or "ρ")}">')
    figs.append(
        f'<img class="fig" alt="accuracy before against after" src="{scatter_figure(c.table, regressed, improved)}">'
    )
    tables = ""
    if len(fronts):
        cols = []
        for side in ("baseline", "new"):
            f = fronts[fronts["model"] == side][[COLUMN, "accuracy", "delta", "rho"]]
            f = f.rename(columns={"delta": "δ", "rho": "ρ"})
            cols.append(
                f"<div><h3>{side} model's front ({len(f)})</h3>"
                + table(f, numeric={"accuracy", "δ", "ρ"}, formats={"accuracy": pct}, scroll=True)
                + "</div>"
            )
        tables = (
            '<div style="display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:18px">'
            + "".join(cols)
            + "</div>"
        )
    return lines(
        '<h2 id="fronts">The two fronts, and every configuration before against after</h2>',
        "<p>Left: each model's measured front over the configurations compared (the worst damage at each level "
        "of fidelity; δ is counted from each model's own clean accuracy). Right: each configuration's accuracy "
        "on the baseline against the new model; below the dotted line it got worse, in red where the paired "
        "test says the drop is real.</p>",
        '<div style="display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start">' + "".join(figs) + "</div>",
        tables,
    )


def regressions_section(reg: pd.DataFrame) -> str:
    """The configurations whose accuracy dropped significantly, largest drop first."""
    if not len(reg):
        return lines(
            f'<h2 id="regressions">Regressions ({len(reg)})</h2>',
            "<p>None: no configuration's accuracy dropped significantly.</p>",
        )
    return lines(
        f'<h2 id="regressions">Regressions ({len(reg)})</h2>',
        "<p>Configurations whose accuracy dropped significantly, largest drop first. 'right → wrong' counts the "
        "inputs the baseline got right and the new model gets wrong under the configuration; McNemar's test asks "
        "whether they outnumber 'wrong → right' by more than chance.</p>",
        change_table(reg, scroll=True),
    )


def interval(v: float, low: float, high: float) -> str:
    """A drop in points with its interval: "+12.3 pt [8.1, 16.0]"; "—" where not estimated."""
    if not np.isfinite(v):
        return "—"
    return f"{100 * v:+.1f} pt [{100 * low:.1f}, {100 * high:.1f}]"


def separated(f: pd.DataFrame) -> bool | None:
    """Whether the first family's interval (Comparison.families) lies above the second's (None: fewer
    than two estimated)."""
    f = f.dropna(subset=["effect"])
    return None if len(f) < 2 else bool(f["effect_low"].iloc[0] > f["effect_high"].iloc[1])


def families_section(c) -> str:
    """The families (and pairs of families) behind the drop, by their estimated effect."""
    f = c.families
    fam = pd.DataFrame(
        {
            "family": f["family"],
            "effect on the drop": [interval(*r) for r in f[["effect", "effect_low", "effect_high"]].to_numpy(float)],
            "at": f["effect_at"].fillna("—"),
            "worst alone": f["alone_at"].fillna("—"),
            "drop alone": [interval(*r) for r in f[["alone", "alone_low", "alone_high"]].to_numpy(float)],
            "regressions": [f"{r} of {n}" for r, n in zip(f["regressions"], f["configurations"])],
        }
    )
    p = c.pairs
    pairs = pd.DataFrame(
        {
            "families": p["family"] + " · " + p["with"],
            "drop beyond the two alone": [
                interval(*r) for r in p[["excess", "excess_low", "excess_high"]].to_numpy(float)
            ],
            "regressions": [f"{r} of {n}" for r, n in zip(p["regressions"], p["configurations"])],
        }
    ).head(15)
    conf = f"{c.confidence:.0%}"
    return lines(
        '<h2 id="families">The families behind the drop</h2>',
        "<p>Most damaging first. <b>Effect on the drop</b>: how many points of accuracy the new model loses "
        "against the baseline because a family is present at its most damaging severity (<b>at</b>): a "
        "least-squares model of each configuration's drop on one term per family and severity (statsmodels, "
        f"robust errors), with its {conf} interval. <b>Drop alone</b>: the largest paired drop where the family "
        f"acts alone, with its {conf} interval. 'Regressions' counts, for reference, the regressions among "
        "the configurations compared that include the family: a count blames whichever family those "
        "configurations hold most often.</p>",
        table(fam, sortable=False),
        "<p class='note'>The first two families' intervals overlap: the data do not say which of them costs more.</p>"
        if separated(f) is False
        else "",
        "<h3>Pairs of families</h3>" if len(pairs) else "",
        "<p>The drop where both act beyond what the two families' own effects predict (negative: one masks "
        "the other), from the same model with one term per pair.</p>"
        if len(pairs)
        else "",
        table(pairs, sortable=False) if len(pairs) else "",
    )


def inputs_section(c, reg: pd.DataFrame, k: int, most: int) -> str:
    """The first `most` regressions input by input: up to k inputs that flipped right → wrong under each."""
    head = '<h2 id="inputs">Regressions input by input</h2>'
    if not len(reg):
        return lines(head, "<p>No regression to show.</p>")
    if c.inputs is None:
        return lines(head, "<p class='note'>The new model's inputs are not at hand (two saved records compared).</p>")
    parts = [
        head,
        f"<p>For the first {min(most, len(reg))} regressions: the inputs the baseline got right and the new model "
        "gets wrong under the configuration, clean beside perturbed, with the new model's prediction.</p>",
    ]
    for _, r in reg.head(most).iterrows():
        theta = tuple(int(r[f"t{i + 1}"]) for i in range(len(c.base.families)))
        cards, n = flipped_cards(c, theta, k)
        parts.append(f"<h3>{escape(r[COLUMN])}</h3>")
        parts.append(
            f"<p>Accuracy {pct(r['before'])} → <b>{pct(r['after'])}</b> ({100 * r['change']:+.1f} points); "
            f"<b>{n:,}</b> inputs right → wrong, {int(r['better']):,} wrong → right; p {r['p_value']:.2g} "
            f"({c.correction_label}-adjusted {r['p_adjusted']:.2g}).</p>"
        )
        parts.append(cards)
    return lines(*parts)


def improvements_section(imp: pd.DataFrame) -> str:
    return lines(
        f'<h2 id="improvements">Improvements ({len(imp)})</h2>',
        change_table(imp, scroll=True) if len(imp) else "<p>None.</p>",
    )


def every_section(t: pd.DataFrame) -> str:
    """Every configuration compared, worst change first (the first MAX_ROWS)."""
    every = t.sort_values(["change", "p_value"], kind="stable")
    more = (
        f"<p class='note'>The first {MAX_ROWS} of {len(t):,} rows; comparison.csv holds them all.</p>"
        if len(t) > MAX_ROWS
        else ""
    )
    return lines(f'<h2 id="all">Every configuration compared ({len(t):,})</h2>', change_table(every, scroll=True), more)


def render(c, k: int = 6, most: int = 5, verdict=None) -> str:
    """comparison.html for the Comparison `c` (and the gate's Verdict, where it ran), section by section."""
    regressed, improved = c.flags()
    reg = c.regressions
    body = lines(
        header(c, verdict),
        facts_section(c),
        fronts_section(c, regressed, improved),
        regressions_section(reg),
        families_section(c),
        inputs_section(c, reg, k, most),
        improvements_section(c.improvements),
        every_section(c.table),
        "<p class='note'>Written by testnav. This page is one file: it needs no network to be read.</p>",
    )
    return page(escape(TITLE), body)


def write(path, comparison, k: int = 6, most: int = 5, verdict=None) -> Path:
    """Render the comparison and write it atomically to `path` (a file, or a directory: its comparison.html)."""
    path = Path(path)
    if path.is_dir():
        path = path / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    html = render(comparison, k, most, verdict)
    with atomic_path(path) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return path
