"""The ledger: every registered claim checked on the tables at hand, in the order registered, and
written as results/claims.md."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

from . import (
    testifai_costs,
    testifai_errors,
    testifai_queries,
    testifai_sampling,
    testnav_fronts,
    testnav_recall,
    testnav_signals,
    testnav_table2,
)
from .evidence import Evidence
from .registry import CLAIMS, Registered
from .rules import HOLDS, NA, NOT, PARTLY, RULES, VERDICTS, Claim

# the ledger's sections in order; in each, its claims in the order the module defines them
SECTIONS = (
    testnav_table2,
    testnav_recall,
    testnav_signals,
    testnav_fronts,
    testifai_errors,
    testifai_queries,
    testifai_sampling,
    testifai_costs,
)


def in_order() -> list[Registered]:
    """Every registered claim, section by section."""
    names = [m.__name__ for m in SECTIONS]
    stray = [c.check.__qualname__ for c in CLAIMS if c.check.__module__ not in names]
    if stray:
        raise RuntimeError(f"claims registered outside the ledger's SECTIONS: {', '.join(stray)}")
    return sorted(CLAIMS, key=lambda c: names.index(c.check.__module__))


def build(res, tables_dir=None) -> list[Claim]:
    """The rows of the ledger on `res` (a `loader.Results`) and the study tables under `tables_dir`
    (default: <results>/tables): each run of consecutive claims of one scope checked item by item."""
    ev = Evidence(res, tables_dir)
    rows = []
    for scope, group in groupby(in_order(), key=lambda c: c.scope):
        checks = [c.check for c in group]
        for args in ev.items(scope):
            rows += [row for check in checks if (row := check(ev, *args)) is not None]
    return rows


def counts(claims) -> dict[str, int]:
    return {v: sum(c.verdict == v for c in claims) for v in VERDICTS}


def counts_sentence(claims) -> str:
    """'N claims: H hold, P hold partly, D do not hold, M not measurable', as claims.md, the report
    and the README say it."""
    n = counts(claims)
    return (
        f"{len(claims)} claims: {n[HOLDS]} hold, {n[PARTLY]} hold partly, {n[NOT]} do not hold, {n[NA]} not measurable"
    )


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_claims(res, path, tables_dir=None) -> tuple[Path, list[Claim]]:
    """Build the ledger from `res` and write it as Markdown; returns (path, claims)."""
    claims = build(res, tables_dir)
    lines = [
        "# Claims ledger",
        "",
        RULES,
        "",
        "The claims of TestNav and TestifAI that the tables under `results/` can check (docs/readings.md "
        "lists those they cannot), rebuilt by `make figures` (testnav/figures/claims.py). A TestNav claim is "
        "checked on each benchmark–fidelity with runs, against the paper's column of the same benchmark or of "
        "the same modality and metric; each value says whether it is a mean, a share or one table's. A reason "
        "marked *conjecture* is not measured here.",
        "",
        f"Verdicts: {counts_sentence(claims)}.",
        "",
        "| # | paper | where | claim | checked on | measured here | parts: statistic or tolerance | verdict | why |",
        "| ---: | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for i, c in enumerate(claims, 1):
        lines.append(
            f"| {i} | {c.paper} | {_cell(c.where)} | {_cell(c.statement)} | {_cell(c.scope)} | {_cell(c.measured)} | "
            f"{_cell('; '.join(map(str, c.parts)))} | **{c.verdict}** | {_cell(c.reason)} |"
        )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path, claims
