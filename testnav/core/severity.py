"""A family's severities: the entries of its table that the lattice's levels apply.

A family selected for `levels=` (testnav/families/severities.py, `select`) carries `severities`, the
table entries of its levels 1..ℓ−1; a paper benchmark's family, or one given by name only, applies its
table in order (level k is severity k). A person reads and writes severities (`contrast=4`), which keep
their meaning whatever `levels=` picked, or the entry's parameter as the reports print it (`×0.5`,
`parameters`); the lattice's t1..tn columns keep the levels.
"""

from __future__ import annotations

import copy
import re

from ..errors import UserError


def tested(family, levels: int | None = None) -> tuple[int, ...]:
    """The table entries `family`'s levels 1.. apply (its own levels where it has no selection, as the
    paper benchmarks' families, or a family given by name only)."""
    chosen = getattr(family, "severities", None)
    if chosen:
        return tuple(int(s) for s in chosen)
    top = int(levels) - 1 if levels is not None else int(getattr(family, "max_level", 0))
    return tuple(range(1, top + 1))


def level_of(family, severity, levels: int | None = None) -> int:
    """The lattice level of `family` that applies table entry `severity` (0: the identity); a severity the
    lattice did not test is refused with the tested ones listed."""
    sev = tested(family, levels)
    value = int(severity)
    if value == 0:
        return 0
    if value not in sev:
        name = family if isinstance(family, str) else family.name
        raise UserError(
            f"{name}={severity}: severity {severity} was not tested (tested: {', '.join(map(str, sev))}; "
            "0 is the identity)"
        )
    return sev.index(value) + 1


def severities_of(families, levels: int) -> list[tuple[int, ...]]:
    """Per family, the table entries its levels 1..levels−1 apply (what a query's severities map to)."""
    return [tested(f, levels) for f in families]


def severity_of(family, level: int) -> int:
    """The table entry that `level` of `family` applies (0: the identity)."""
    if int(level) == 0:
        return 0
    chosen = getattr(family, "severities", None)
    return int(chosen[int(level) - 1]) if chosen else int(level)


def spelled(text: str) -> str:
    """A parameter as a query may write it: no spaces, × as x, lower case ("×0.5" → "x0.5", "q 80" → "q80")."""
    return re.sub(r"\s+", "", str(text)).replace("×", "x").lower()


def parameters(family) -> dict[str, int]:
    """Each entry of `family`'s whole table by its parameter as the reports print it (`spelled`): {"x0.5": 3}.
    Empty for a family that does not print its entries (a record's, which keeps only the tested labels)."""
    table = list(getattr(family, "table_params", getattr(family, "params", None)) or [])
    if not table:
        return {}
    whole = copy.copy(family)
    whole.params = table
    return {spelled(whole.level_label(s)): s for s in range(1, len(table) + 1)}
