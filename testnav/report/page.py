"""Facts (testnav/report/facts.py) as one HTML page, section by section, in the order a person asks:
is it done, what was tested, what breaks it and which inputs, each family alone and in pairs,
and the answers to their queries."""

from __future__ import annotations

import difflib
import re
from html import escape

import numpy as np
import pandas as pd

from ..core.naming import COLUMN, level_columns
from ..stopping.epsilon import representatives, resolution_tolerance
from . import plots
from .facts import Facts, Shown
from .template import page

WITHIN = ' class="within"'  # a front member not told apart at the measurement's resolution
MAX_ROWS = 500  # rows of the ranked list written into the page (the file ranked.csv has them all)


def pct(x) -> str:
    return "—" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{100 * float(x):.1f} %"


def num(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    return f"{float(x):.{digits}f}"


def table(df: pd.DataFrame, numeric=(), sortable: bool = True, scroll: bool = False, formats=None) -> str:
    """A DataFrame as an HTML table; numeric columns right-aligned and sorted as numbers."""
    formats = formats or {}
    head = "".join(f'<th class="{"n" if c in numeric else ""}">{escape(str(c))}</th>' for c in df.columns)
    rows = []
    for rec in df.itertuples(index=False):
        cells = []
        for c, v in zip(df.columns, rec):
            shown = formats[c](v) if c in formats else num(v) if c in numeric else str(v)
            data = f' data-v="{float(v)!r}"' if c in numeric and isinstance(v, (int, float, np.number)) else ""
            cells.append(f'<td class="{"n" if c in numeric else ""}"{data}>{escape(shown)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    html = f'<table class="{"sortable" if sortable else ""}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    return f'<div class="scroll">{html}</div>' if scroll else html


def verdict_sentence(s: dict | None) -> str:
    """The certificate in words: p_complete, p_good where the summary has it, why the run stopped,
    what to do next, and, for a live run, what measuring every configuration would cost instead."""
    if not s or s.get("p_complete") is None:
        return ""
    p, unique, space = float(s["p_complete"]), s.get("unique"), s.get("space_size")
    good = None if s.get("p_good") is None else float(s["p_good"])
    ran = f"{unique:,} of the {space:,} configurations" if unique is not None and space else "the configurations"
    words = [
        f"After testing {ran}, the chance that the measured front below is complete — that no untested "
        f"configuration would hurt the model more at the same fidelity — is {p:.0%}."
    ]
    if good is not None:
        eps = float(s.get("epsilon") or 0.01)
        if s.get("epsilon_setting") == "auto" and s.get("epsilon") is None:
            within = "the measurement's resolution (too few configurations measured yet to read it)"
        elif s.get("epsilon_setting") == "auto":
            within = (
                f"{eps:.3f} of accuracy, the resolution of a paired difference of two accuracies measured on its "
                f"{int(s['epsilon_inputs']):,} inputs ({float(s['epsilon_confidence']):.0%} half-width), "
                "or the fidelity's own resolution"
            )
        else:
            within = f"{eps:.0%} of either measure's range"
        rec = s.get("p_good_record") or {}
        record = (
            f" At its stops on held-out lattices the front was within that of complete in {rec['eps_complete']} of "
            f"{rec['stops']} ({rec['low']:.0%}–{rec['high']:.0%}, Clopper–Pearson)."
            if rec.get("stops")
            else ""
        )
        words.append(
            f"The stopping score p_good, which rises as untested configurations that beat it by more than {within} "
            f"become unlikely (a front good enough to act on), is {good:.2f}; it is a score, not a probability.{record}"
        )
        if s.get("certificate_note"):
            words.append(f"It does not stop the search here: it {s['certificate_note'].removeprefix('certificate: ')}.")
    on_good = s.get("stop_on") == "good" and good is not None
    if s.get("stopped_at"):
        which = (
            f"the stopping score reached {s['stop_at']:.2f}"
            if on_good
            else f"the first chance reached {s['stop_at']:.0%}"
        )
        words.append(f"The search stopped there because {which}.")
    settled = good if on_good else p
    if s.get("final_recall") is not None:
        pass  # replayed: the ground truth says below how much of the true front was found, no guess needed
    elif settled >= 0.95:
        words.append("You may stop testing: more configurations are unlikely to reveal a new weakness.")
    elif settled >= 0.5:
        words.append("More testing may still find a weakness not shown here.")
    else:
        words.append("The front is probably incomplete: a larger budget would likely find more.")
    if s.get("live") and unique and space and unique < space and s.get("wall_seconds"):
        per = float(s["wall_seconds"]) / unique
        total = space * per
        took = f"{total:.0f} s" if total < 90 else f"{total / 60:.0f} min" if total < 5400 else f"{total / 3600:.1f} h"
        words.append(
            f"Measuring all {space:,} configurations instead (a ground truth) would take at "
            f"most about {took}, {space / unique:.1f}× what this search spent at its {per:.2f} s per configuration "
            "(a ground truth shares work between configurations, so each costs it less)."
        )
    if s.get("final_recall") is not None:
        words.append(f"Against the ground truth, the run found {s['final_recall']:.0%} of the true front.")
    return " ".join(words)


def header(f: Facts) -> str:
    model = f.tested.get("model") or f.tested.get("benchmark")
    sentence = verdict_sentence(f.summary)
    gate = [q for q in f.queries if q.get("min_accuracy") is not None]
    parts = [f"<h1>What breaks {escape(str(model))}?</h1>", f'<p class="sub">{escape(f.title)}</p>']
    links = [("tested", "What was tested")]
    if f.ranked is not None:
        links.append(("front", "Measured front"))
    if f.shown:
        links.append(("inputs", "Inputs"))
    if f.low_order.accuracy:
        links.append(("families", "Families alone and in pairs"))
    if f.predicted is not None:
        links.append(("predicted", "Predicted"))
    if f.queries:
        links.append(("queries", "Queries"))
    parts.append("<nav>" + "".join(f'<a href="#{a}">{escape(t)}</a>' for a, t in links) + "</nav>")
    if sentence:
        parts.append(f'<p class="verdict">{escape(sentence)}</p>')
    for q in gate:  # the gate's own line: the query, the interval, the threshold, the tests measured
        css = "verdict" if q.get("decision", "pass") == "pass" else "verdict fail"
        parts.append(f'<p class="{css}">{escape(q["line"])}</p>')
    return "\n".join(parts)


def what_was_tested(f: Facts) -> str:
    t = f.tested
    facts = [
        (
            "model",
            t.get("model") and f"{t['model']}" + (f" ({t['parameters']:,} parameters)" if t.get("parameters") else ""),
        ),
        ("benchmark", t.get("benchmark")),
        (
            "data",
            t.get("inputs")
            and f"{t['inputs']:,} {'texts' if f.text else 'images'}"
            + (f", {t['classes']} classes" if t.get("classes") else ""),  # findings loaded from disk: none
        ),
        ("clean accuracy", t.get("clean_accuracy") is not None and pct(t["clean_accuracy"])),
        ("fidelity metric ρ", t.get("fidelity")),
        ("lattice", f"{len(f.families)} families × {f.levels} levels = {f.levels ** len(f.families):,} configurations"),
        ("device", t.get("device")),
        ("table", t.get("table")),
    ]
    grid = "".join(f'<div class="fact"><b>{escape(k)}</b>{escape(str(v))}</div>' for k, v in facts if v)
    out = [f'<h2 id="tested">What was tested</h2><div class="grid">{grid}</div>']
    if any(labels for _, labels in f.families):
        levels = pd.DataFrame(
            [[name, *labels[1:]] for name, labels in f.families],
            columns=["family", *[f"level {k}" for k in range(1, f.levels)]],
        )
        out.append("<h3>Families and their levels (level 0 leaves the input as it is)</h3>")
        out.append(table(levels, sortable=False))
    return "\n".join(out)


def units(f: Facts) -> tuple[str, float, str]:
    """(the label of δ, its scale, the label of ρ): accuracy points lost and the metric's own value
    where the facts hold them absolute, else the labelled min–max normalised values."""
    if f.absolute:
        return "accuracy lost (points)", 100.0, f"fidelity ({f.rho_label})"
    return "δ (accuracy lost, min–max normalised)", 1.0, f"ρ ({f.rho_label}, min–max normalised)"


def values_text(f: Facts, delta, rho) -> str:
    if f.absolute:
        return f"{100 * delta:.1f} points lost · {f.rho_label} {rho:.3g}"
    return f"δ {delta:.3f} · ρ {rho:.3f} (normalised)"


def front_section(f: Facts) -> str:
    if f.ranked is None or not len(f.ranked):
        return ""
    r = f.ranked
    front = r[r["rank"] == 0]
    lost, scale, fid = units(f)
    eps = resolution_tolerance(f.summary or {})  # in the trace's units, which `delta_trace`, `rho_trace` keep
    trace = front[["delta_trace", "rho_trace"]] if "delta_trace" in front else front[["delta", "rho"]]
    told = representatives(trace.to_numpy(float), eps) if eps is not None else None
    within = np.zeros(len(front), bool) if told is None else ~told
    key = "".join(
        f"<li{WITHIN if w else ''}>{escape(str(row[COLUMN]))} <span class='note'>"
        f"{escape(values_text(f, row['delta'], row['rho']))}{' · within the resolution' if w else ''}</span></li>"
        for w, (_, row) in zip(within, front.iterrows())
    )
    resolution = ""
    if told is not None:
        s = f.summary
        resolution = (
            f"<p>At the measurement's resolution, ± {100 * float(s['epsilon']):.1f} accuracy points (the "
            f"{float(s['epsilon_confidence']):.0%} half-width of the paired difference of two accuracies on "
            f"{int(s['epsilon_inputs']):,} inputs; the error bars), <b>{int(told.sum())} of the {len(told)} "
            "front members are told apart</b>. Each of the others (hollow, marked in the list) hurts the model "
            "no more than a kept member, within that resolution, at a fidelity at most as good: a second test "
            "set of the same size could reorder them.</p>"
        )
    cols = [c for c in [COLUMN, "rank", "delta", "rho", "proposal", "crowding"] if c in r.columns]
    shown = (
        r[cols]
        .head(MAX_ROWS)
        .assign(delta=scale * r["delta"].head(MAX_ROWS))
        .rename(columns={"delta": lost, "rho": fid})
    )
    numeric = {"rank", lost, fid, "proposal", "crowding"}
    more = (
        f"<p class='note'>The first {MAX_ROWS} of {len(r):,} rows; ranked.csv holds them all.</p>"
        if len(r) > MAX_ROWS
        else ""
    )
    error = None if eps is None else float(f.summary["epsilon"]) if f.absolute else float(eps[0])
    front_png = plots.front_figure(r, f.rho_label, error, told, scale, lost)
    long = len(front) > plots.MAX_LABELS
    return "\n".join(
        [
            '<h2 id="front">Measured front: the worst damage at each level of fidelity</h2>',
            "<p>Each point is a configuration the search ran: how much accuracy it cost (δ, up) against how "
            "close the perturbed inputs stay to the clean ones (ρ, right). No configuration measured beats a "
            "front member on both. The numbers on the plot are the list beside it.</p>",
            *([resolution] if resolution else []),
            f'<div style="display:flex;flex-wrap:wrap;gap:18px;align-items:flex-start">'
            f'<img class="fig" alt="measured front" src="{front_png}">'
            + ("</div>" if long else f'<ol class="key">{key}</ol></div>'),
            f"<details><summary>All {len(front):,} front members, numbered as on the plot</summary>"
            f'<ol class="key">{key}</ol></details>'
            if long
            else "",
            "<details><summary>Ranked list (Pareto rank, then crowding distance; click a heading to sort)</summary>",
            table(shown, numeric=numeric, scroll=True),
            more,
            "</details>",
        ]
    )


TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


def text_diff(clean: str, perturbed: str) -> tuple[str, str]:
    """Word-level diff: the clean text with what was removed struck, the perturbed one with what
    was added marked."""
    a, b = TOKENS.findall(clean), TOKENS.findall(perturbed)
    left, right = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        old, new = escape("".join(a[i1:i2])), escape("".join(b[j1:j2]))
        if op == "equal":
            left.append(old)
            right.append(new)
        else:
            left.append(f"<del>{old}</del>" if old else "")
            right.append(f"<ins>{new}</ins>" if new else "")
    return "".join(left), "".join(right)


def joined(item) -> str:
    return " ‖ ".join(item) if isinstance(item, tuple) else str(item)


def prediction_line(row, name) -> str:
    label, before, after = int(row["label"]), int(row["clean_prediction"]), int(row["prediction"])
    cls = lambda k: "right" if k == label else "wrong"  # noqa: E731
    return (
        f"label <b>{escape(name(label))}</b> · clean <span class='{cls(before)}'>{escape(name(before))}</span>"
        f" → perturbed <span class='{cls(after)}'>{escape(name(after))}</span>"
    )


def strip(shown: Shown, text: bool, names: dict) -> str:
    name = lambda k: names.get(int(k), str(int(k)))  # noqa: E731
    cards = []
    for _, row in shown.examples.iterrows():
        flip = "flip" if row["flipped"] else ""
        head = f"<div>#{int(row['input'])} {prediction_line(row, name)}</div>"
        if text:
            left, right = text_diff(joined(row["clean"]), joined(row["perturbed"]))
            cards.append(
                f'<div class="card {flip}">{head}<p><span class="lbl">clean</span>{left}</p>'
                f'<p><span class="lbl">perturbed</span>{right}</p></div>'
            )
        else:
            cards.append(
                f'<div class="card {flip}"><div class="pair">'
                f'<figure><img alt="input {int(row["input"])} clean" src="{plots.thumbnail(row["clean"])}">clean</figure>'
                f'<figure><img alt="input {int(row["input"])} perturbed" src="{plots.thumbnail(row["perturbed"])}">'
                f"perturbed</figure></div>{head}</div>"
            )
    return f'<div class="{"texts" if text else "strip"}">{"".join(cards)}</div>'


def inputs_section(f: Facts, names: dict) -> str:
    if not f.shown:
        return ""
    which = (
        "each member of the measured front (and each configuration you named)"
        if f.ranked is not None
        else "the configuration the tomography predicts worst (and each configuration you named)"
    )
    out = [
        '<h2 id="inputs">Inputs under each configuration</h2>',
        f"<p>For {which}: inputs clean beside perturbed, with the label and the model's prediction before "
        "and after. Inputs whose prediction flipped from right to wrong come first, outlined in red; then "
        "other changed predictions.</p>",
    ]
    for s in f.shown:
        extra = f" · {values_text(f, s.delta, s.rho)}" if s.delta is not None else ""
        out.append(f"<h3>{escape(s.name)} <span class='tag'>{escape(s.why)}</span></h3>")
        out.append(
            f"<p>Accuracy {pct(s.accuracy)} (clean {pct(s.clean_accuracy)}); <b>{s.flipped:,} of {s.inputs:,}</b> "
            f"inputs flipped from right to wrong{escape(extra)}.</p>"
        )
        out.append(strip(s, f.text, names))
        hit = s.per_class[s.per_class["drop"] > 0].head(3)
        if len(hit):
            worst = ", ".join(f"{c} ({100 * d:.0f} points)" for c, d in zip(hit["class"], hit["drop"]))
            out.append(f"<p>Classes that lose the most accuracy: {escape(worst)}.</p>")
        pc = s.per_class.head(12).drop(columns=["label"])
        pc = pc.rename(columns={"clean_accuracy": "clean accuracy", "drop": "accuracy drop"})
        hidden = len(s.per_class) - len(pc)
        out.append("<details><summary>Accuracy per class (largest drop first)</summary>")
        out.append(
            table(
                pc,
                numeric={"inputs", "clean accuracy", "accuracy", "flipped", "accuracy drop"},
                formats={"clean accuracy": pct, "accuracy": pct, "accuracy drop": pct},
            )
        )
        if hidden > 0:
            out.append(f"<p class='note'>and {hidden} more classes</p>")
        out.append("</details>")
    return "\n".join(out)


def families_section(f: Facts, lattice) -> str:
    if not f.low_order.accuracy:
        return ""
    names = f.names
    labels = [labels for _, labels in f.families]
    clean = f.low_order.accuracy.get(0, f.tested.get("clean_accuracy") or np.nan)
    acc = []
    for i in range(lattice.n):
        row = []
        for level in range(lattice.levels):
            theta = np.zeros(lattice.n, np.int64)
            theta[i] = level
            row.append(f.low_order.accuracy.get(int(lattice.index(theta)), np.nan))
        acc.append(row)
    out = [
        '<h2 id="families">Each family alone, and in pairs</h2>',
        f"<p class='note'>Accuracy {escape(f.low_order.note)}.</p>",
        "<h3>Each family alone, by level (the order-1 tests; dashed: clean accuracy)</h3>",
        f'<img class="fig" alt="each family alone" src="{plots.order1_figure(names, labels, acc, clean)}">',
    ]
    levels = [f"level {k}" for k in range(1, lattice.levels)]
    one = pd.DataFrame([[n, *a[1:]] for n, a in zip(names, acc)], columns=["family", *levels])
    out.append(table(one, numeric=set(one.columns[1:]), formats={c: pct for c in one.columns[1:]}))
    if f.pairs is not None and len(f.pairs):
        panels = []
        for _, p in f.pairs.iterrows():
            i, j = names.index(p["family_i"]), names.index(p["family_j"])
            grid = np.full((lattice.levels - 1, lattice.levels - 1), np.nan)
            for a in range(1, lattice.levels):
                for b in range(1, lattice.levels):
                    theta = np.zeros(lattice.n, np.int64)
                    theta[i], theta[j] = a, b
                    grid[a - 1, b - 1] = f.low_order.accuracy.get(int(lattice.index(theta)), np.nan)
            word = "no interaction shown" if p["independent"] else "interact"
            panels.append(
                (
                    f"{p['family_i']} × {p['family_j']}: {word} (p {p['p_value']:.3g})",
                    p["family_i"],
                    p["family_j"],
                    grid,
                )
            )
        out.append("<h3>Pairs of families (the order-2 tests): accuracy at each pair of levels</h3>")
        out.append(f'<img class="fig" alt="pairs of families" src="{plots.order2_figure(panels, lattice.levels)}">')
        cols = ["family_i", "family_j", "chi2", "dof", "p_adjusted", "detectable_points", "independent"]
        chi = f.pairs[[c for c in cols if c in f.pairs]].rename(
            columns={
                "family_i": "family",
                "family_j": "with",
                "chi2": "Σ z²",
                "p_adjusted": "p (Holm)",
                "detectable_points": "detectable (points)",
            }
        )
        chi["verdict"] = np.where(
            chi.pop("independent"),
            "no interaction shown (treated as independent by §3's estimate)",
            "interact: together worse or better than apart",
        )
        out.append(
            "<p>TestifAI's independence test asks whether a pair's accuracy is what the two families alone "
            "predict (relative to the clean accuracy), here on the per-input outcomes: each level pair's "
            "excess over its delta-method standard error, Bonferroni over a pair's level pairs and Holm over "
            "the pairs. Where they interact, combining them is not just the sum of its parts; where no "
            "interaction is shown, “detectable” is the smallest excess the test would have found with 80 % "
            "power: the pair is not shown independent.</p>"
        )
        numeric = {"Σ z²", "dof", "p (Holm)", "detectable (points)"}
        formats = {"p (Holm)": lambda v: f"{v:.2g}", "detectable (points)": lambda v: f"{v:.1f}"}
        out.append(table(chi, numeric=numeric, formats=formats))
    return "\n".join(out)


def predicted_section(f: Facts) -> str:
    if f.predicted is None or not len(f.predicted):
        return ""
    df = f.predicted.drop(columns=level_columns(f.predicted)).rename(
        columns={"r_pred": "predicted accuracy", "r_true": "true accuracy"}
    )
    numeric = {"order", "predicted accuracy", "true accuracy"}
    return "\n".join(
        [
            '<h2 id="predicted">Worst configurations the tomography predicts (not measured)</h2>',
            table(df, numeric=numeric, formats={c: pct for c in ("predicted accuracy", "true accuracy")}),
        ]
    )


GATE_WORDS = {"pass": "passed", "fail": "FAILED", "undecided": "undecided"}


def queries_section(f: Facts) -> str:
    if not f.queries:
        return ""
    rows = []
    for q in f.queries:
        rows.append(
            {
                "query": q["query"],
                "tests": q["tests"],
                "measured": q["measured"],
                "inferred": q["inferred"],
                "R measured": q.get("R_measured"),
                "R predicted": q.get("R_predicted"),
                "R estimate": q.get("R_estimate"),
                "R low": q.get("R_low"),
                "R high": q.get("R_high"),
                "measured for it": q.get("sampled"),
                **({"R true": q["R_true"]} if q.get("R_true") is not None else {}),
                **(
                    {"min accuracy": q["min_accuracy"], "gate": GATE_WORDS[q.get("decision", "undecided")]}
                    if q.get("min_accuracy") is not None
                    else {}
                ),
            }
        )
    df = pd.DataFrame(rows)
    numeric = {"tests", "measured", "inferred", "R measured", "R predicted", "R estimate", "R low", "R high"}
    numeric |= {"measured for it", "R true", "min accuracy"}
    return "\n".join(
        [
            '<h2 id="queries">Queries</h2>',
            "<p>R(Q): the mean accuracy over the configurations a query selects, measured where the tomography "
            "measured them and predicted elsewhere (the estimate combines both). [R low, R high] is its interval at "
            f"{pct(f.queries[0].get('confidence', 0.95))}: it holds however wrong the prediction is, because the "
            "unmeasured configurations count anywhere from 0 to 1 until a random sample of them is measured "
            "('measured for it'); it also covers the inputs' sampling. The predictions come from low-order tests "
            "and tend to over-estimate accuracy on combinations of three or more families. A gate passes when R "
            "low reaches its threshold, fails when R high is below it, and is otherwise undecided.</p>",
            table(df, numeric=numeric),
        ]
    )


def render(f: Facts, lattice, class_names: dict | None = None) -> str:
    body = [
        header(f),
        what_was_tested(f),
        front_section(f),
        inputs_section(f, class_names or {}),
        families_section(f, lattice),
        predicted_section(f),
        queries_section(f),
    ]
    if f.notes:
        body.append("<p class='note'>" + "<br>".join(escape(n) for n in f.notes) + "</p>")
    body.append("<p class='note'>Written by testnav. This page is one file: it needs no network to be read.</p>")
    model = f.tested.get("model") or f.tested.get("benchmark")
    return page(escape(f"What breaks {model}? · {f.title}"), "\n".join(b for b in body if b))
