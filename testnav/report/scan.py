"""The practitioner's report of `Tester.scan()` (testnav/findings.py): the answer first.

In the order a person asks: the findings in words and numbers (clean accuracy with its interval,
the worst family, the strongest interaction, what was measured and which severities), the failure
modes with their inputs, each family alone (curves in the family's own parameters) and in pairs
(heat maps and the interactions beyond independence), and only then the measured front, the
certificate of the search (when one ran) and what was tested. Losses are accuracy points,
fidelity is on its metric's own scale (named); the page reuses the report's template, tables and
input strips (testnav/report/page.py).
"""

from __future__ import annotations

from html import escape
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ..core.cache import atomic_path
from ..core.pareto import crowding_distance, nondominated_rank
from . import plots
from .page import pct, strip, table, verdict_sentence, what_was_tested
from .template import page

MAX_LABELS = 10  # configurations numbered on the front's plot (and listed beside it)
MAX_INTERACTIONS = 10  # rows of the interactions table shown unfolded


def points(x) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{float(x):.1f}"


def loss_text(value, low, high) -> str:
    """A loss in points with its paired interval."""
    return f"{points(value)} [{points(low)}, {points(high)}]"


def p_cell(p) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def span(low, high) -> str:
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def lead(fnd) -> str:
    """The title, the findings in three sentences, how they were measured and which severities."""
    c = fnd.clean
    sub = (
        f"{c['n']:,} inputs · {len(fnd.family_info)} families × {fnd.levels} levels = "
        f"{fnd.method['size']:,} configurations · fidelity {fnd.fidelity['scale']}"
    )
    sentences = [fnd.clean_sentence(), fnd.worst_family_sentence(), fnd.interaction_sentence()]
    severities = "; ".join(f"{f.name}: {', '.join(f.labels[1:])} ({f.range_text()})" for f in fnd.family_info)
    links = [("modes", "Failure modes"), ("alone", "Each family alone"), ("pairs", "Pairs and interactions")]
    links += [("front", "Measured front"), ("tested", "What was tested")]
    return "\n".join(
        [
            f"<h1>What breaks {escape(fnd.model)}?</h1>",
            f'<p class="sub">{escape(sub)}</p>',
            '<div class="verdict">' + "".join(f"<p>{escape(s)}</p>" for s in sentences if s) + "</div>",
            f"<p>{escape(fnd.method_sentence())} {escape(fnd.order_sentence())} Tested severities: {escape(severities)}.</p>",
            "<nav>" + "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in links) + "</nav>",
        ]
    )


def failure_modes_section(fnd, text: bool, names: dict, k: int = 6) -> str:
    fm = fnd.failure_modes
    scale = fnd.fidelity["name"]
    out = [
        '<h2 id="modes">Failure modes: the smallest configurations that break it</h2>',
        "<p>Configurations ranked by the accuracy they cost, each <b>minimal</b>: no configuration with fewer "
        "families or lower levels already does 90 % of its damage, so each names what is needed to do it. "
        f"Each is shown to cost at least {100 * fnd.min_loss:.1f} points (the lower end of the loss's paired "
        f"{fnd.confidence:.0%} interval), is minimal by its intervals (every smaller configuration is shown to do "
        f"less than 90 % of its damage) and keeps its inputs recognisable: {escape(fnd.floor_text())}. "
        "“Largest part”: the sub-configuration that does the most of the damage on its own.</p>",
    ]
    if not len(fm):
        out.append(
            "<p>None: no configuration above the fidelity floor is shown both to cost that much and to be minimal.</p>"
        )
        return "\n".join(out)
    shown = pd.DataFrame(
        {
            "#": fm["rank"],
            "configuration": fm["configuration"],
            "accuracy": [
                f"{pct(a)} {span(lo, hi)}" for a, lo, hi in zip(fm["accuracy"], fm["accuracy_low"], fm["accuracy_high"])
            ],
            "accuracy lost (points)": [
                loss_text(v, lo, hi) for v, lo, hi in zip(fm["lost_points"], fm["lost_low"], fm["lost_high"])
            ],
            f"fidelity ({scale})": fm["fidelity"],
            "largest part": [
                f"{p} ({points(q)} points)" if p else "—" for p, q in zip(fm["largest_part"], fm["largest_part_points"])
            ],
            "inputs flipped": fm["flipped"],
        }
    )
    numeric = {"#", f"fidelity ({scale})", "inputs flipped"}
    out.append(table(shown, numeric=numeric))
    for _, row in fm.iterrows():
        out.append(
            f"<h3>{int(row['rank'])}. {escape(row['configuration'])}</h3><p>Accuracy {pct(row['accuracy'])} "
            f"{span(row['accuracy_low'], row['accuracy_high'])}, "
            f"{loss_text(row['lost_points'], row['lost_low'], row['lost_high'])} points below clean; "
            f"<b>{int(row['flipped']):,} of {fnd.clean['n']:,}</b> inputs flipped from right to wrong; "
            f"{escape(scale)} {row['fidelity']:.3g}.</p>"
        )
        examples = fnd.examples.get(row["configuration"])
        if examples is not None and len(examples):
            out.append(strip(SimpleNamespace(examples=examples.head(k)), text, names))
    return "\n".join(out)


def families_section(fnd) -> str:
    df = fnd.families
    if not len(df):
        return ""
    c = fnd.clean
    img = plots.family_curves_figure(fnd.family_info, df, c["accuracy"], c["low"], c["high"])
    shown = pd.DataFrame(
        {
            "family": df["family"],
            "parameter": df["parameter"],
            "severity": [
                f"{s} of {next(f.table_size for f in fnd.family_info if f.name == n)}"
                for s, n in zip(df["severity"], df["family"])
            ],
            "accuracy": [
                f"{pct(a)} {span(lo, hi)}" for a, lo, hi in zip(df["accuracy"], df["accuracy_low"], df["accuracy_high"])
            ],
            "accuracy lost (points)": [
                loss_text(v, lo, hi) for v, lo, hi in zip(df["lost_points"], df["lost_low"], df["lost_high"])
            ],
            "McNemar p (Holm)": df["p_adjusted"],
            "breaks": np.where(df["breaks"], "breaks", ""),
        }
    )
    return "\n".join(
        [
            '<h2 id="alone">Each family alone</h2>',
            "<p>Accuracy at each tested severity, with its interval (bars; shaded: the clean accuracy's). "
            "The x axis is the family's own parameter, with its place in the family's severity table. A level "
            f"<b>breaks</b> when {escape(fnd.breaks_rule())}; every such level is marked. A loss's interval is the "
            "paired one: clean and perturbed are measured on the same inputs.</p>",
            f'<img class="fig" alt="each family alone" src="{img}">',
            "<details open><summary>The numbers</summary>",
            table(shown, numeric={"McNemar p (Holm)"}, formats={"McNemar p (Holm)": p_cell}),
            "</details>",
        ]
    )


def pair_grid(fnd, i: int, j: int) -> np.ndarray:
    conf = fnd.configurations
    n = len(fnd.family_info)
    others = [f"t{k + 1}" for k in range(n) if k not in (i, j)]
    sub = conf[(conf[others] == 0).all(axis=1)] if others else conf
    grid = np.full((fnd.levels, fnd.levels), np.nan)
    for a, b, acc in zip(sub[f"t{i + 1}"], sub[f"t{j + 1}"], sub["accuracy"]):
        grid[int(a), int(b)] = acc
    return grid


def pairs_section(fnd) -> str:
    infos = fnd.family_info
    if len(infos) < 2:
        return ""
    inter = fnd.interactions
    panels = []
    for i, j in combinations(range(len(infos)), 2):
        mine = inter[inter["families"] == f"{infos[i].name} + {infos[j].name}"] if len(inter) else inter
        sig = mine[mine["significant"] & (mine["excess_points"] > 0)] if len(mine) else mine
        if len(sig):
            title = (
                f"{infos[i].name} × {infos[j].name}\nup to {sig['excess_points'].max():.1f} points beyond independence"
            )
        else:
            title = f"{infos[i].name} × {infos[j].name}\nno excess shown"
        panels.append((title, infos[i].name, infos[i].labels, infos[j].name, infos[j].labels, pair_grid(fnd, i, j)))
    out = [
        '<h2 id="pairs">Pairs of families, and interactions beyond independence</h2>',
        "<p>Accuracy (%) with two families applied together, each axis in the family's own parameter "
        "(none: the family left out). Where the families' failures are independent, the pair's accuracy is "
        "the clean accuracy times each family's relative accuracy alone; an interaction costs more (or less) "
        "than that. Each combination is tested on the per-input outcomes (a two-sided z-test with the delta "
        "method's standard error: the product is estimated on the same inputs), Holm over all of them. A "
        "combination not shown to interact is not shown independent: “detectable” is the smallest excess its "
        "test would have found with 80 % power.</p>",
        f'<img class="fig" alt="pairs of families" src="{plots.pair_maps_figure(panels)}">',
    ]
    top = inter[inter["significant"] & inter["minimal"]] if len(inter) else inter
    if len(top):
        out.append(
            "<h3>Interactions (significant and minimal; largest excess first)</h3><p>“Expected”: "
            "the accuracy if the families failed independently; “excess”: the accuracy points the combination "
            "costs beyond that, with its interval (negative: it costs less); p: the combination's own test, "
            "Holm-adjusted over every combination tested; minimal: no smaller combination has 90 % of the "
            "excess.</p>"
        )
        out.append(interactions_table(top.head(MAX_INTERACTIONS)))
    if len(inter) > len(top.head(MAX_INTERACTIONS)):
        out.append(f"<details><summary>All {len(inter):,} combinations tested</summary>")
        out.append(interactions_table(inter))
        out.append("</details>")
    return "\n".join(out)


def interactions_table(df: pd.DataFrame) -> str:
    shown = pd.DataFrame(
        {
            "configuration": df["configuration"],
            "accuracy": df["accuracy"],
            "expected": df["expected"],
            "excess (points)": [
                loss_text(v, lo, hi) for v, lo, hi in zip(df["excess_points"], df["excess_low"], df["excess_high"])
            ],
            "worst alone (points)": df["alone_points"],
            "p (Holm)": df["p_adjusted"],
            "verdict": df["direction"],
            "detectable (points)": df["detectable_points"],
        }
    )
    numeric = {"accuracy", "expected", "worst alone (points)", "p (Holm)", "detectable (points)"}
    formats = {"accuracy": pct, "expected": pct, "worst alone (points)": points, "detectable (points)": points}
    formats["p (Holm)"] = p_cell
    return table(shown, numeric=numeric, formats=formats, scroll=len(df) > 15)


def front_points(fnd) -> pd.DataFrame:
    """Every measured configuration with its Pareto rank on (accuracy lost, fidelity), clean left out."""
    conf = fnd.configurations
    conf = conf[conf["order"] > 0].reset_index(drop=True)
    sign = 1.0 if fnd.fidelity.get("higher_is_better", True) else -1.0
    fid = conf["fidelity"].to_numpy(float)
    f = np.stack([conf["lost_points"].to_numpy(float), sign * np.nan_to_num(fid, nan=-np.inf * sign)], axis=1)[None]
    rank = nondominated_rank(f)[0]
    out = conf[["configuration", "order", "accuracy", "lost_points", "fidelity"]].copy()
    out["rank"] = rank
    out["crowding"] = crowding_distance(f, rank[None])[0]
    return out


def labelled_points(pts: pd.DataFrame, modes) -> list:
    """At most MAX_LABELS row positions worth a number: the failure modes, then the front's ends, its
    knee and members spread along it (plots.few)."""
    chosen = list(pts.index[pts["configuration"].isin(list(modes))])
    front = pts[pts["rank"] == 0]
    for p in plots.few(front, "fidelity", "lost_points") if len(front) else []:
        if p not in chosen:
            chosen.append(p)
    return chosen[:MAX_LABELS]


def front_section(fnd) -> str:
    pts = front_points(fnd)
    if not len(pts):
        return ""
    modes = fnd.failure_modes["configuration"].tolist() if len(fnd.failure_modes) else []
    chosen = labelled_points(pts, modes)
    numbers = {p: k + 1 for k, p in enumerate(chosen)}
    name = fnd.fidelity["name"]
    x_label = f"fidelity: {fnd.fidelity['scale']}"
    img = plots.front_summary_figure(pts, numbers, x_label)
    front = pts[pts["rank"] == 0]
    key = pts.loc[chosen, ["configuration", "accuracy", "lost_points", "fidelity", "rank"]].copy()
    key.insert(0, "#", [numbers[p] for p in chosen])
    key["why"] = [
        "failure mode" if c in modes else "front" if r == 0 else "" for c, r in zip(key["configuration"], key["rank"])
    ]
    key = key.drop(columns="rank").rename(
        columns={"lost_points": "accuracy lost (points)", "fidelity": f"fidelity ({name})"}
    )
    full = front.sort_values("lost_points", ascending=False)[["configuration", "accuracy", "lost_points", "fidelity"]]
    full = full.rename(columns={"lost_points": "accuracy lost (points)", "fidelity": f"fidelity ({name})"})
    fmt = {"accuracy": pct, "accuracy lost (points)": points}
    numeric = {"#", "accuracy", "accuracy lost (points)", f"fidelity ({name})"}
    return "\n".join(
        [
            '<h2 id="front">Measured front: the most damage at each level of fidelity</h2>',
            f"<p>Every configuration measured ({len(pts):,}): accuracy points lost against fidelity. No measured "
            f"configuration beats a front member ({len(front):,} of them) on both. The numbered points are the "
            "failure modes, the front's ends and its knee, and members spread along it.</p>",
            '<div style="display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start">'
            f'<img class="fig" alt="measured front" src="{img}">'
            + table(key, numeric=numeric, formats=fmt, sortable=False)
            + "</div>",
            f"<details><summary>The whole front ({len(front):,} configurations)</summary>",
            table(full, numeric=numeric, formats=fmt, scroll=len(full) > 15),
            "</details>",
        ]
    )


def certificate_section(fnd) -> str:
    run = fnd.run
    if run is None:
        return ""
    sentence = verdict_sentence(run.summary)
    return "\n".join(
        [
            '<h2 id="certificate">The search and its certificate</h2>',
            f"<p>{escape(sentence)}</p>" if sentence else "",
            f"<p class='note'>{escape(fnd.method_sentence())}</p>",
        ]
    )


def tested_facts(fnd):
    """Facts for page.what_was_tested: from the findings' session where there is one."""
    from .facts import Facts, family_table, tested

    session = fnd.session
    if session is not None:
        b = session.benchmark
        inputs = session.inputs if session.readable else None
        t = tested(b, inputs, fnd.fidelity["name"])
        t["model"] = fnd.model
        return Facts("", t, family_table(b.families, fnd.levels), fnd.levels, text=bool(inputs and inputs.text)), inputs
    t = {
        "model": fnd.model,
        "inputs": fnd.clean["n"],
        "clean_accuracy": fnd.clean["accuracy"],
        "fidelity": fnd.fidelity["name"],
    }
    return Facts("", t, [(f.name, f.labels) for f in fnd.family_info], fnd.levels), None


def render_findings(fnd, k: int = 6) -> str:
    facts, inputs = tested_facts(fnd)
    names = inputs.class_names if inputs is not None and len(fnd.failure_modes) else {}
    body = [
        lead(fnd),
        failure_modes_section(fnd, facts.text, names, k),
        families_section(fnd),
        pairs_section(fnd),
        front_section(fnd),
        certificate_section(fnd),
        what_was_tested(facts),
    ]
    if fnd.notes:
        body.append("<p class='note'>" + "<br>".join(escape(n) for n in fnd.notes) + "</p>")
    body.append("<p class='note'>Written by testnav (Tester.scan). This page is one file: it needs no network.</p>")
    return page(escape(f"What breaks {fnd.model}?"), "\n".join(b for b in body if b))


def write_findings(path, fnd, k: int = 6) -> Path:
    """Render the findings and write them atomically to `path` (a file, or a directory: its report.html)."""
    path = Path(path)
    if path.is_dir():
        path = path / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    html = render_findings(fnd, k)
    with atomic_path(path) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return path
