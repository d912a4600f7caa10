"""Searches over Θ. Each is one module, instantiated from conf/search/*.yaml.

The contract is `Search`: `run(oracle, budget, seed) -> proposals`, the lattice indices proposed
in order, at most `budget` of them. Budget accounting follows Algorithm 1: every proposal counts,
whether or not the configuration was seen before (a repeat reuses the cached values). What the
stages ask of a search beyond `run` is declared here, so a new search is told what to provide by
the base class, not by a crash in app.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..core.lattice import Lattice
from ..core.oracle import Oracle

PAPER_OBJECTIVES = ("delta", "rho")  # every table has them; anything else is a signal column


@dataclass(frozen=True)
class Style:
    """How figures draw a search: a matplotlib colour and line style (no two searches of one
    figure share both; tests/test_searches_contract.py checks every figure)."""

    color: str = "black"
    ls: str = "-"


class Search(ABC):
    """A search over the lattice. Subclasses set `label` and `style` (what figures and tables call
    and draw it; a conf/search YAML may override both for a named variant, e.g. `δ only`) and
    `objectives` (the oracle values it reads)."""

    label: str = ""
    style: Style = Style()
    objectives: tuple[str, ...] = PAPER_OBJECTIVES

    def __init__(self, name: str, label: str | None = None, style: dict | None = None):
        self.name = name
        self.label = label or type(self).label or name
        self.style = Style(**style) if style else type(self).style

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
