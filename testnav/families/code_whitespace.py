"""Whitespace (code docstrings): ReCode's WhitespacePerturbation with the paper's (p_add, p_del).

One `random()` draw r per character: a whitespace character (space, \\n, \\t) is deleted if
r < p_del; any other character gets a space appended if r < p_add. ReCode hard-codes
add = .05, remove = .10; the TestNav footnote lists levels as (p_add, p_del) ∈ {(.10,.05),
(.15,.07), (.20,.10), (.25,.12), (.30,.15)}, i.e. level 1 is ReCode's pair reversed. We follow
the paper's order (docs/text.md). Not masked: ReCode does not protect identifiers here.
"""

from __future__ import annotations

from ..errors import UserError
from .code_base import CodeFamily


class Whitespace(CodeFamily):
    name = "whitespace"
    param_format = "add {}, del {}"

    def __init__(
        self, params=((0.10, 0.05), (0.15, 0.07), (0.20, 0.10), (0.25, 0.12), (0.30, 0.15)), name: str | None = None
    ):
        super().__init__(params, name)
        for p in self.params:
            if not (isinstance(p, tuple) and len(p) == 2):
                raise UserError(f"whitespace level {p!r} must be a pair [p_add, p_del]")

    def transform(self, doc, param, rng, context):
        p_add, p_del = float(param[0]), float(param[1])
        out = []
        for ch in doc:
            r = rng.random()
            if ch.isspace():
                if r >= p_del:
                    out.append(ch)
            else:
                out.append(ch)
                if r < p_add:
                    out.append(" ")
        return "".join(out)
