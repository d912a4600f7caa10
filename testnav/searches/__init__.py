"""Searches over Θ. Each is one module plus one conf/search YAML, built by name with `make`.

The contract is `Search`: `run(oracle, budget, seed) -> proposals`, the lattice indices proposed
in order, at most `budget` of them; a search returns early once `oracle.stopped` (the stopping
certificate says the front is good enough). Budget accounting follows Algorithm 1: every proposal counts,
whether or not the configuration was seen before (a repeat reuses the cached values). What the
stages ask of a search beyond `run` is declared here, so a new search is told what to provide by
the base class, not by a crash in app.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..core.lattice import Lattice
from ..core.oracle import Oracle
from ..registry import Registry

PAPER_OBJECTIVES = ("delta", "rho")  # every table has them; anything else is a signal column


@dataclass(frozen=True)
class Style:
    """How figures draw a search: a matplotlib colour and line style (no two searches of one
    figure share both; tests/unit/registry/test_contracts.py checks every figure)."""

    color: str = "black"
    ls: str = "-"


class Search(ABC):
    """A search over the lattice. `objectives` names the oracle values it reads; `label` and
    `style` (what figures and tables call and draw it) come from its conf/search YAML."""

    objectives: tuple[str, ...] = PAPER_OBJECTIVES

    def __init__(self, name: str, label: str | None = None, style: dict | None = None):
        self.name = name
        self.label = label or name
        self.style = Style(**style) if style else Style()

    @property
    def requires(self) -> tuple[str, ...]:
        """Signal columns (beyond δ and ρ) the ground-truth table must hold for this search."""
        return tuple(n for n in self.objectives if n not in PAPER_OBJECTIVES)

    @property
    def replay_only(self) -> bool:
        """True when the search reads the whole table up front (`oracle.table`), so it cannot run live."""
        return False

    live_fix: str = ""  # the setting that makes a replay-only search live, named in the error

    def check(self, lattice: Lattice, budget: int) -> None:
        """Refuse settings that cannot work on this lattice and budget, before any work starts."""
        return None

    def fit(self, lattice: Lattice, budget: int) -> None:
        """Adapt default settings to a small lattice or budget (with a note); settings the user gave are
        kept and checked by `check`."""
        return None

    @abstractmethod
    def run(self, oracle: Oracle, budget: int, seed: int) -> np.ndarray: ...


# What a conf/search YAML declares about its search rather than to its constructor: the figures'
# groups it belongs to (GROUPS) and its place in their legends and Table 2's rows (`order`).
GROUPS = {
    "baseline": "§4.2 baselines (Table 2, Fig. 2)",
    "ablation": "§4.3 ablations (Fig. 3)",
    "input_level": "§4.4 input-level signals (Fig. 4)",
}
FALLBACK_COLORS = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf", "#bcbd22")
REGISTRY = Registry("search", Search, "search", meta=("groups", "order"))


def names() -> list[str]:
    """Every search of conf/search."""
    return REGISTRY.names()


def make(name, **overrides) -> Search:
    """The search `name` (conf/search/<name>.yaml, or a node Hydra composed already) with
    `overrides` of its settings, e.g. `make("nsga2", pop_size=50, engine="fast")`."""
    return REGISTRY.make(name, **overrides)


@dataclass(frozen=True)
class Info:
    """What figures and tables need of a search, read from its YAML."""

    name: str
    label: str
    style: Style
    groups: tuple[str, ...] = ()
    order: float = float("inf")
    evolutionary: bool = False  # it has the evolutionary searches' `engine` setting (pymoo | fast)


@cache
def info(name: str) -> Info:
    """The search's presentation and membership; a name with no conf/search file (a user's
    own search, an old run) gets its name and a colour of its own, stable across figures."""
    if name not in REGISTRY.names():
        return Info(name, name, Style(FALLBACK_COLORS[sum(map(ord, name)) % len(FALLBACK_COLORS)], "-"))
    node = REGISTRY.info(name)
    unknown = set(node.get("groups", ())) - set(GROUPS)
    if unknown:
        raise ValueError(f"conf/search/{name}.yaml: groups {sorted(unknown)} (valid: {', '.join(GROUPS)})")
    return Info(
        name,
        node.get("label") or name,
        Style(**node["style"]) if node.get("style") else Style(),
        tuple(node.get("groups", ())),
        float(node.get("order", float("inf"))),
        "engine" in node,
    )


def group(which: str) -> list[str]:
    """The searches of a figure group (GROUPS), in their declared order."""
    if which not in GROUPS:
        raise ValueError(f"search group {which!r} (valid: {', '.join(GROUPS)})")
    return sorted((n for n in names() if which in info(n).groups), key=lambda n: (info(n).order, n))


def paper_searches() -> list[str]:
    """Every search of some figure group: what Table 2 and Figs. 2–4 draw and the paper sweeps run."""
    return sorted({n for g in GROUPS for n in group(g)}, key=lambda n: (info(n).order, n))
