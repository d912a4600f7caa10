"""`results/report.md`: the reproduction at a glance.

Why Markdown with relative links: it renders on GitHub and in any editor next to the
PNGs it embeds, and diffs cleanly when a rerun changes a number. Each figure and table
comes with one sentence carrying the number that matters (computed in `build.py` from
the same frames that were drawn); what is missing is listed at the end, not hidden.
"""

from __future__ import annotations

import os
from pathlib import Path

from .build import Entry
from .readings import reading_sentences


def run_overview(res) -> str:
    r = res.runs
    if r.empty:
        return "No search runs were found."
    lines = []
    for (b, f), g in r.groupby(["benchmark", "fidelity"], sort=True):
        lines.append(
            f"{b}/{f}: {g['search'].nunique()} searches × {g['seed'].nunique()} seed(s) "
            f"({len(g)} runs, budget {int(g['budget'].iloc[0]):,} proposals, |P*| = {int(g['pstar_size'].iloc[0])})"
        )
    return "Runs used: " + "; ".join(lines) + "."


def write_report(entries: list[Entry], res, path, extra_notes=()) -> Path:
    path = Path(path)
    base = path.parent
    rel = lambda p: os.path.relpath(Path(p), base).replace(os.sep, "/")  # noqa: E731
    out = [
        "# Reproduction report",
        "",
        "Rebuilt by `make figures` from everything under `results/` (TestNav: Pareto-guided search; "
        "TestifAI: partial tomography). Figures are in `figures/`, tables in `tables/`.",
        "",
        run_overview(res),
        "",
    ]
    readings = reading_sentences(res)
    if readings:
        out += ["Readings behind the language and code numbers: " + " ".join(readings), ""]
    sections = list(dict.fromkeys(e.section for e in entries))
    for sec in sections:
        out += [f"## {sec}", ""]
        for e in (e for e in entries if e.section == sec):
            out += [f"### {e.title}", "", e.sentence, ""]
            p = Path(e.path)
            if e.kind == "table" and p.suffix == ".md" and p.exists():
                out += [p.read_text().rstrip(), "", f"[{rel(p)}]({rel(p)})", ""]
            elif e.kind in ("table", "link"):
                out += [f"[{rel(p)}]({rel(p)})", ""]
            else:
                out += [f"![{e.title}]({rel(p)})", ""]
    notes = list(extra_notes) + list(res.missing)
    if notes:
        out += ["## What is missing or was skipped", ""] + [f"- {n}" for n in notes] + [""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out))
    return path
