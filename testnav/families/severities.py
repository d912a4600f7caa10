"""Which entries of a family's severity table a lattice of ℓ levels tests.

A published table has m entries (ImageNet-C's and MNIST-C's five, severities 1..m). The paper
benchmarks take the first ℓ − 1 of them as levels 1..ℓ−1 (their YAML and goldens keep that). In
`testnav.Tester` and the generic presets `levels=ℓ` instead spreads ℓ − 1 severities over the
whole table, mildest and harshest included, so that a small lattice still reaches the table's
end; `severities=[…]` picks them by hand:

    spread(5, 4)  → (1, 3, 5)          spread(5, 6) → (1, 2, 3, 4, 5)
    spread(5, 3)  → (1, 5)             spread(5, 2) → (3,)   one severity: the middle one
    select(make("contrast"), (1, 3, 5))  → a contrast family whose levels 1, 2, 3 are severities 1, 3, 5

A selected family keeps its class and code (so its cache key is its own parameters), and carries
`severities` (the table entries of its levels 1..ℓ−1) and `table_size` (m) for the reports.
"""

from __future__ import annotations

import copy

import numpy as np

from ..errors import UserError


def spread(table_size: int, levels: int) -> tuple[int, ...]:
    """ℓ − 1 severities of a table of `table_size` entries, evenly spread from the first to the last
    (rounded to the nearest entry); a single one is the table's middle."""
    k = int(levels) - 1
    if k == 1:
        return ((table_size + 1) // 2,)
    return tuple(int(s) for s in np.unique(np.round(np.linspace(1, table_size, k)).astype(int)))


def check_severities(severities, family) -> tuple[int, ...]:
    """Hand-picked severities: whole numbers within the family's table, increasing."""
    m = family.max_level
    if isinstance(severities, (str, bytes)) or not hasattr(severities, "__iter__"):
        raise UserError(f"severities={severities!r}: a list of table entries, e.g. severities=[1, 3, 5] (1..{m})")
    values = list(severities)
    bad = [s for s in values if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= int(s) <= m]
    if bad or not values:
        raise UserError(
            f"severities={values}: {family.name}'s table has entries 1..{m}; pick one or more of them, "
            f"e.g. severities=[1, {(m + 1) // 2}, {m}]"
        )
    if any(b <= a for a, b in zip(values, values[1:])):
        raise UserError(f"severities={values}: give them in increasing order, each once (1..{m})")
    return tuple(int(s) for s in values)


def select(family, severities):
    """A copy of `family` whose levels 1..k are the table entries `severities` (1-based)."""
    chosen = check_severities(severities, family)
    table = list(getattr(family, "table_params", family.params))
    out = copy.copy(family)
    out.table_params = table
    out.params = [table[s - 1] for s in chosen]
    out.severities = chosen
    out.table_size = len(table)
    return out


def spread_family(family, levels: int):
    """`family` with `spread` severities for a lattice of `levels` levels."""
    m = family.max_level
    if not 2 <= int(levels) <= m + 1:
        raise UserError(
            f"levels={levels} is outside family {family.name}'s table (valid: 2..{m + 1}, level 0 being the identity)"
        )
    return select(family, spread(m, levels))


def table_size(family) -> int:
    return int(getattr(family, "table_size", None) or family.max_level)


def make(name, levels: int | None = None, severities=None, **kwargs):
    """`testnav.families.make(name, **kwargs)` with its severities spread over the table for `levels`
    levels, or picked by hand (`severities`); for the generic presets' YAML."""
    from . import make as make_family

    family = make_family(name, **kwargs)
    if severities is not None:
        return select(family, list(severities))
    return spread_family(family, levels) if levels is not None else family
