"""The claims, registered: one function per claim, decorated with `@claim(scope)`.

A claim function takes the tables at hand (`evidence.Evidence`) and one item of its scope, and
returns its row (`rules.Claim`), or None where the row is not written (another claim of its scope
says what is missing instead). The scope is what the claim is checked on, one row per item:

    once      the tables at hand as a whole                          f(ev)
    column    each benchmark–fidelity with runs                      f(ev, benchmark, fidelity)
    benchmark each benchmark with runs                               f(ev, benchmark)
    truths    each benchmark with ground truths                      f(ev, benchmark)
    study     each TestifAI study under tables/testifai/             f(ev, study)

The ledger's rows come section by section (ledger.py's SECTIONS, one module each), and in a section
in the order its module defines its claims; consecutive claims of one scope are checked item by
item, so a benchmark–fidelity's rows stay together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SCOPES = ("once", "column", "benchmark", "truths", "study")


@dataclass(frozen=True)
class Registered:
    """A claim function and the scope it is checked on."""

    scope: str
    check: Callable


CLAIMS: list[Registered] = []


def claim(scope: str):
    """Register the decorated function as a claim checked on `scope` (one of SCOPES)."""
    if scope not in SCOPES:
        raise ValueError(f"claim scope {scope!r} (valid: {', '.join(SCOPES)})")

    def register(fn):
        CLAIMS.append(Registered(scope, fn))
        return fn

    return register
