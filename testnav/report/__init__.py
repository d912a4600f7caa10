"""report.html: what breaks the model, in one self-contained file a person reads in a browser.

    report.for_run(path, run, benchmark, session, configs=[(2, 0, 1)], k=8)   # a search, live or replayed
    report.for_tomography(path, tomo, benchmark, session, k=8, queries=[answer])

Every search, live, tomography and query run directory holds one (testnav/app/stages.py,
testnav/app/tomography.py), and `Tester.report(path)` writes the same. Figures and input
thumbnails are embedded as data URIs, the style and the one script (sortable tables) inline:
the page fetches nothing. What it shows is gathered first (testnav/report/facts.py), then
rendered (testnav/report/page.py). `k`, the inputs shown per configuration, is report.k
(conf/settings/report.yaml; `ReportSpec` in testnav/pipeline/specs.py reads it for the callers).
"""

from __future__ import annotations

from pathlib import Path

from ..core.cache import atomic_path
from ..core.lattice import Lattice
from . import facts as gather
from .page import render

NAME = "report.html"


def write(path, facts, lattice, class_names=None) -> Path:
    """Render `facts` and write them atomically to `path` (a file, or a directory: its report.html)."""
    path = Path(path)
    if path.is_dir():
        path = path / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    html = render(facts, lattice, class_names)
    with atomic_path(path) as tmp:
        tmp.write_text(html, encoding="utf-8")
    return path


def class_names_of(facts, session, benchmark) -> dict:
    if session is None or benchmark is None or not facts.shown:
        return {}
    return session.inputs.class_names


def for_run(path, run, benchmark=None, session=None, configs=(), *, k: int, queries=()) -> Path:
    """The report of a search run (Tester.search, stage=search | live)."""
    f = gather.for_run(run, benchmark, session, configs, k, queries)
    lattice = benchmark.lattice if benchmark is not None else Lattice(len(f.families), f.levels)
    return write(path, f, lattice, class_names_of(f, session, benchmark))


def for_tomography(path, tomo, benchmark, session=None, configs=(), *, k: int, queries=(), source: str = "") -> Path:
    """The report of a tomography and its queries (Tester.tomography, stage=tomography | query)."""
    f = gather.for_tomography(tomo, benchmark, session, configs, k, queries, source)
    return write(path, f, benchmark.lattice, class_names_of(f, session, benchmark))
