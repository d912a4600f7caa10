"""Character case (code docstrings): ReCode's ChangeCharCase, probability p per level.

Each cased character costs one `random()` draw and flips case if the draw is < p;
characters without case draw nothing. ReCode's default p = 0.35 is the TestNav level 3;
the levels are p ∈ {.1, .2, .35, .5, .7}. The problem's protected words (`protected`:
recode | ast, testnav/families/code_protected.py) are masked.
"""

from __future__ import annotations

from .code_base import CodeFamily


class CharCase(CodeFamily):
    name = "charcase"
    param_format = "p {}"
    masked = True

    def __init__(self, params=(0.1, 0.2, 0.35, 0.5, 0.7), name: str | None = None, protected: str = "recode"):
        super().__init__(params, name, protected)

    def transform(self, doc, p, rng, context):
        p, out = float(p), []
        for c in doc:
            if c.isupper() and rng.random() < p:
                out.append(c.lower())
            elif c.islower() and rng.random() < p:
                out.append(c.upper())
            else:
                out.append(c)
        return "".join(out)
