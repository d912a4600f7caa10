"""Fidelity metrics φ(T_θ, D). One metric per module plus one conf/fidelity YAML, built by name.

A metric is prepared once on the clean inputs (and the model, for feature-based metrics)
and then called on each perturbed set, returning one raw float per configuration. Its YAML
holds its settings' defaults and what it declares about itself: its label and its place in
the tables (`order`), and the modalities whose benchmarks compute it. A benchmark computes
every metric of its modality (`metrics_for`), with the settings its own `metrics:` node
overrides; `fidelity=` chooses which column becomes ρ, its sign the metric's own
(`Metric.higher_is_better`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ..errors import UserError
from ..registry import Registry
from .base import Metric

REGISTRY = Registry("fidelity", Metric, "fidelity metric", meta=("label", "order", "modalities"))
RHO = "rho"  # an external table's own ρ column (groundtruth.table=…)


def names(modality: str | None = None) -> list[str]:
    """Every fidelity metric of conf/fidelity (or of one modality: image, text, code), in table order."""
    out = [n for n in REGISTRY.names() if modality is None or modality in info(n).modalities]
    return sorted(out, key=lambda n: (info(n).order, n))


def make(name, **overrides) -> Metric:
    """The metric `name` (conf/fidelity/<name>.yaml, or a composed node) with `overrides` of its settings."""
    return REGISTRY.make(name, **overrides)


@dataclass(frozen=True)
class Info:
    name: str
    label: str
    order: float
    modalities: tuple[str, ...]


@cache
def info(name: str) -> Info:
    """A metric's label, table order and modalities; ρ of an external table, and any column no
    YAML declares (an old run's), get their own name."""
    if name == RHO:
        return Info(RHO, "ρ", 2.0, ())
    if name not in REGISTRY.names():
        return Info(name, name, float("inf"), ())
    node = REGISTRY.info(name)
    return Info(
        name, node.get("label") or name, float(node.get("order", float("inf"))), tuple(node.get("modalities", ()))
    )


def metrics_for(modality: str, settings: dict | None = None) -> dict[str, Metric]:
    """The metrics a benchmark of `modality` computes, by column. None (a YAML benchmark that
    names none): every registered metric of that modality. Settings by name (a YAML benchmark's
    `metrics:`): the same, `settings[name]` overriding its YAML, a Metric object taken as it is,
    any other name added, a name set to None left out. Metric objects only (a Python caller's
    choice, or {}): exactly those."""
    if settings is not None and all(isinstance(m, Metric) for m in settings.values()):
        return dict(settings)
    settings = dict(settings or {})
    out = {}
    for name in columns_for(modality, settings):
        given = settings.get(name) or {}
        metric = given if isinstance(given, Metric) else make(name, **dict(given))
        out[metric.name] = metric
    return out


def columns_for(modality: str, settings: dict | None = None) -> list[str]:
    """The columns `metrics_for(modality, settings)` computes, from the settings alone (nothing built)."""
    settings = dict(settings or {})
    listed = names(modality) + [n for n in settings if n not in names(modality)]
    return [n for n in listed if not (n in settings and settings[n] is None)]


def sign(column: str, metrics: dict | None = None) -> float:
    """ρ = sign × column, from the metric that writes `column` (`metrics`: a benchmark's own, by
    column; otherwise this package's class of that column); a table's own `rho` column is ρ already."""
    if metrics and column in metrics:
        return metrics[column].sign
    if column == RHO:
        return 1.0
    if column not in REGISTRY.names():
        raise UserError(f"no fidelity metric writes the column {column!r} (valid: {', '.join(names())}, {RHO})")
    from hydra.utils import get_class

    from ..extras import check

    node = REGISTRY.info(column)
    check(node, f"fidelity {column}")  # only this metric's class is imported: another's extra may be missing
    return 1.0 if get_class(node["_target_"]).higher_is_better else -1.0
