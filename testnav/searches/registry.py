"""What figures and tables call and draw each search, read from the search itself.

A run's summary names its search (`search.name`, the conf/search file of the same name); the
label and style come from that YAML where it names a variant (`δ only`, `NAC`) and otherwise
from the class its `_target_` names, so a new search appears in every table and figure with
its own name and style and no list in the figures code to edit.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from omegaconf import OmegaConf

from ..paths import CONF
from . import Search, Style

FALLBACK_COLORS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#bcbd22")


def _node(name: str) -> dict:
    """conf/search/<name>.yaml merged over the files its defaults list names (their order, then itself)."""
    path = CONF / "search" / f"{name}.yaml"
    if not path.is_file():
        return {}
    own = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    defaults = list(own.pop("defaults", []))
    if "_self_" not in defaults:
        defaults.append("_self_")  # Hydra's rule: a file without _self_ composes itself last
    merged: dict = {}
    for d in defaults:
        merged.update(own if d == "_self_" else _node(d))
    return merged


@lru_cache(maxsize=None)
def presentation(name: str) -> tuple[str, Style]:
    """(label, style) of the search named `name`; a name with no conf/search file (a user's own
    search, an old run) gets its name and a colour of its own, stable across figures."""
    node = _node(name)
    target = node.get("_target_")
    cls = Search
    if target:
        module, _, attr = target.rpartition(".")
        cls = getattr(importlib.import_module(module), attr)
    label = node.get("label") or cls.label or name
    if node.get("style"):
        return label, Style(**node["style"])
    if target:
        return label, cls.style
    return label, Style(FALLBACK_COLORS[sum(map(ord, name)) % len(FALLBACK_COLORS)], "-")


def label(name: str) -> str:
    return presentation(name)[0]


def style(name: str) -> Style:
    return presentation(name)[1]
