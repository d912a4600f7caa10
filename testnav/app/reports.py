"""What the app's stages write for a person beside their tables: report.html, and for each
configuration named on the command line (`examples='gaussian_blur=2,jpeg=1'`, several separated
by `;`) the inputs under it as data:

* `examples-<name>.csv`: every input of D, flips (right → wrong) first: its index, label, clean and
  perturbed prediction, whether it flipped or changed (and for text the clean and perturbed text);
* `perturbed-<name>.pt` (images: {"images": (N, C, H, W) tensor, "labels": (N,)}) or
  `perturbed-<name>.csv` (texts, in the columns the text preset reads: text or text_a/text_b, label).

`report.write=false` writes neither the report nor these (a large sweep that only wants tables).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from ..core.cache import atomic_path
from ..core.naming import parse_config
from ..core.severity import severity_of


def named(cfg, benchmark) -> list[tuple[int, ...]]:
    """The configurations of `report.examples`, checked against the benchmark before any work."""
    given = cfg.report.examples
    if given is None or given == "":
        return []
    items = [given] if isinstance(given, str) else list(given)
    parts = [p for item in items for p in str(item).split(";") if p.strip()]
    return [parse_config(p, benchmark.families, benchmark.levels) for p in parts]


def slug(theta, families) -> str:
    return "-".join(f"{f.name}{severity_of(f, t)}" for f, t in zip(families, theta) if t) or "clean"


def check_k(cfg) -> int:
    """report.k, checked (with every report.* setting) by its spec."""
    from ..pipeline import ReportSpec

    return ReportSpec.from_node(cfg.report).k


def write_csv(df: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def write_examples(out_dir: Path, session, thetas) -> list[Path]:
    """examples-*.csv and perturbed-* for each configuration (see the module docstring)."""
    if not thetas:
        return []
    inputs, families = session.inputs, session.benchmark.families
    written = []
    for theta in thetas:
        name = slug(theta, families)
        out = inputs.outcomes(theta)
        table = inputs.examples(theta, len(out), outcomes=out)
        if inputs.text:
            texts = pd.DataFrame({"clean": table.pop("clean"), "perturbed": table.pop("perturbed")}).map(
                lambda v: " ‖ ".join(v) if isinstance(v, tuple) else v
            )
            table = pd.concat([table, texts], axis=1)
        else:
            table = table.drop(columns=["clean", "perturbed"])
        write_csv(table, out_dir / f"examples-{name}.csv")
        written.append(out_dir / f"examples-{name}.csv")
        perturbed = inputs.perturb(theta)
        if inputs.text:
            pairs = isinstance(perturbed[0], tuple)
            cols = (
                {"text_a": [p[0] for p in perturbed], "text_b": [p[1] for p in perturbed]}
                if pairs
                else {"text": perturbed}
            )
            write_csv(pd.DataFrame({**cols, "label": inputs.labels}), out_dir / f"perturbed-{name}.csv")
            written.append(out_dir / f"perturbed-{name}.csv")
        else:
            path = out_dir / f"perturbed-{name}.pt"
            with atomic_path(path) as tmp:
                torch.save({"images": perturbed, "labels": torch.as_tensor(inputs.labels)}, tmp)
            written.append(path)
    return written


def for_run(cfg, out_dir: Path, run, benchmark=None, session=None, thetas=()) -> list[str]:
    """report.html of a search run and the named configurations' files; the names written."""
    if not cfg.report.write:
        return []
    from .. import report

    if benchmark is not None and session is None:
        from .. import pipeline

        session = pipeline.open(benchmark, cfg.cache_dir, cfg.device)
    shown = [] if session is None else write_examples(out_dir, session, thetas)
    report.for_run(out_dir, run, benchmark, session, thetas, k=check_k(cfg))
    return [report.NAME, *(p.name for p in shown)]


def for_tomography(cfg, out_dir: Path, tomo, benchmark, thetas=(), queries=()) -> list[str]:
    """report.html of a tomography (and its query answers) and the named configurations' files."""
    if not cfg.report.write:
        return []
    from .. import pipeline, report

    session = pipeline.open(benchmark, cfg.cache_dir, cfg.device)
    shown = write_examples(out_dir, session, thetas)
    source = str(cfg.tomography.source)
    report.for_tomography(out_dir, tomo, benchmark, session, thetas, k=check_k(cfg), queries=queries, source=source)
    return [report.NAME, *(p.name for p in shown)]
