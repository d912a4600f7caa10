"""Fidelity metrics φ(T_θ, D). One metric per module, instantiated from the benchmark YAML.

A metric is prepared once on the clean inputs (and the model, for feature-based metrics)
and then called on each perturbed set, returning one raw float per configuration. The
`fidelity=` config group only chooses which raw column becomes ρ; its sign is the metric's own
(`Metric.higher_is_better`).
"""

import importlib
import pkgutil

from .base import Metric


def metric_classes() -> dict[str, type[Metric]]:
    """Every metric class of this package by the column it writes (importing each module once)."""
    for m in pkgutil.iter_modules(__path__):
        if m.name != "base":
            importlib.import_module(f"{__name__}.{m.name}")
    return {cls.column: cls for cls in Metric.__subclasses__()}


def sign(column: str, metrics: dict | None = None) -> float:
    """ρ = sign × column, from the metric that writes `column` (`metrics`: a benchmark's own, by
    column; otherwise this package's class of that column); a table's own `rho` column is ρ already."""
    if metrics and column in metrics:
        return metrics[column].sign
    if column == "rho":
        return 1.0
    cls = metric_classes().get(column)
    if cls is None:
        valid = ", ".join(sorted(metric_classes()))
        raise ValueError(f"no fidelity metric writes the column {column!r} (valid: {valid}, rho)")
    return 1.0 if cls.higher_is_better else -1.0
