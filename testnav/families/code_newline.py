"""Newline insertion (code prompts): n blank lines, n ∈ {1..5} (the paper's "adds n lines").

`where: afterdoc` (the default) is ReCode's `format/new_lines.py: new_line_afterdoc` repeated n
times: n newlines right after the docstring's closing quotes, i.e. at the start of the code part
of the prompt, where all of ReCode's newline perturbations act. Level 1 is ReCode's transform
exactly. Why this one of ReCode's three: on TestNav's prompts (the whole HumanEval/MBPP prompt,
no partial solution) the code after the docstring is a single line end, so `new_lines` (a blank
line after each code line with probability ½) degenerates to "one newline or none, at random",
and `new_line_aftercode` (one newline at the very end) yields the same string as
`new_line_afterdoc`; only a count of inserted lines at that place gives five severities.
ReCode finds the docstring by the first `\"\"\"` (or `'''`) after the entry point's name, and so
do we (the opening quotes are those `split_prompt` found).

`where: docstring` is the harness's earlier reading, not in ReCode: level n breaks the
docstring's text at n distinct word boundaries drawn uniformly without replacement (all of them
if it has fewer), each break a newline followed by the docstring's indentation.

Both change whitespace only, so sacreBLEU's chrF (which deletes whitespace) does not see them.
"""

from __future__ import annotations

import re

from ..errors import UserError
from .code_base import CodeFamily
from .text_base import TextBatch

GAP = re.compile(r"(?<=[ \t])(?=\S)")  # just before a word that follows a space or tab
WHERE = ("afterdoc", "docstring")


def after_docstring(head: str, rest: str, n: int) -> str:
    """`rest` (what follows the docstring's opening) with n newlines after its closing quotes."""
    q = max(head.rfind('"""'), head.rfind("'''"))
    if q < 0:
        return rest
    close = rest.find(head[q : q + 3])
    if close < 0:
        return rest
    return rest[: close + 3] + "\n" * n + rest[close + 3 :]


class Newline(CodeFamily):
    name = "newline"
    param_format = "{} lines"

    def __init__(self, params=(1, 2, 3, 4, 5), name: str | None = None, where: str = "afterdoc"):
        super().__init__(params, name)
        if where not in WHERE:
            raise UserError(f"newline where={where} (valid: {', '.join(WHERE)})")
        self.where = where

    def apply(self, x: TextBatch, param, generator):
        if self.where == "docstring":
            return super().apply(x, param, generator)
        out = []
        for item in x.items:  # deterministic: no randomness drawn
            head, doc, cases = item
            rest = after_docstring(head, doc + cases, int(param))
            out.append((head, doc, rest[len(doc) :]) if rest.startswith(doc) else (head, "", rest))
        return x.replace(out)

    def transform(self, doc, n, rng, context):
        gaps = [m.start() for m in GAP.finditer(doc)]
        picked = sorted(rng.sample(gaps, min(int(n), len(gaps))))
        indent = context.get("indent", "")
        out, last = [], 0
        for g in picked:
            out.append(doc[last:g].rstrip(" \t"))  # the break replaces the spaces before the word
            out.append("\n" + indent)
            last = g
        out.append(doc[last:])
        return "".join(out)

    def describe(self) -> dict:
        return {**super().describe(), "where": self.where}
