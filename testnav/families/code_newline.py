"""Newline insertion (code docstrings): n line breaks inside the docstring, n ∈ {1..5}.

ReCode has no "n lines" parameter: its newline transforms (`format/new_lines.py`) act on the
partial-code prompt after the docstring (`new_lines`: an extra blank line after each code line
with probability ½; `new_line_afterdoc`: one newline after the closing quotes). TestNav applies
its four families to the docstring compositionally, so level n breaks the docstring's text at
n distinct word boundaries drawn uniformly without replacement (all of them if it has fewer),
each break a newline followed by the docstring's indentation, as a person re-wrapping the
text would. Nothing outside the docstring changes (docs/text.md).
"""

from __future__ import annotations

import re

from .code_base import CodeFamily

GAP = re.compile(r"(?<=[ \t])(?=\S)")  # just before a word that follows a space or tab


class Newline(CodeFamily):
    name = "newline"

    def __init__(self, params=(1, 2, 3, 4, 5), name: str | None = None):
        super().__init__(params, name)

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
