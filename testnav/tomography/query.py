"""The Boolean query language of TestifAI §4.1.2, with the quality constraint of §6.

    Q ::= name op level | q op τ | Q ∧ Q | Q ∨ Q | ( Q )       op ∈ <, ≤ (<=), =, ≥ (>=), >, ≠ (!=)

`name` is a family name, or p1..pn / t1..tn by position; ∧ may be written &, and; ∨ as |, or.
∧ binds tighter than ∨. `q` compares the (measured or predicted) quality score q_σ with a
real threshold τ. A query denotes the set ⟦Q⟧ ⊆ Θ, and R(Q) is the mean robustness over it.
Errors point at the offending token: "query error at 8: unknown family 'blurr' …".
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import UserError

TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<op><=|>=|!=|==|≤|≥|≠|<|>|=)|"
    r"(?P<and>&&?|∧|\band\b)|(?P<or>\|\|?|∨|\bor\b)|(?P<lp>\()|(?P<rp>\))|(?P<name>[A-Za-z_][\w\-]*))"
)
OPS = {
    "<": np.less,
    "<=": np.less_equal,
    "≤": np.less_equal,
    "=": np.equal,
    "==": np.equal,
    ">=": np.greater_equal,
    "≥": np.greater_equal,
    ">": np.greater,
    "!=": np.not_equal,
    "≠": np.not_equal,
}


def tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            start = pos + len(text[pos:]) - len(text[pos:].lstrip())
            raise UserError(f"query error at {start}: unexpected character {text[start]!r} in {text!r}")
        kind = m.lastgroup
        start = m.start(kind)
        tokens.append((kind, m.group(kind), start))
        pos = m.end()
    tokens.append(("end", "", len(text)))
    return tokens


class Query:
    """A parsed query over a lattice whose families are `names` (in order)."""

    def __init__(self, text: str, names: list[str]):
        self.text, self.names = text, list(names)
        self.tokens = tokenize(text)
        self.pos = 0
        if self.tokens[0][0] == "end":
            raise UserError("query is empty (e.g. 'brightness >= 3 & zoom <= 1')")
        self.tree = self._or()
        kind, value, at = self.tokens[self.pos]
        if kind != "end":
            raise UserError(f"query error at {at}: unexpected {value!r} in {text!r} (expected &, | or the end)")

    # --- parsing -----------------------------------------------------------------------
    def _peek(self):
        return self.tokens[self.pos]

    def _take(self, kind, what):
        k, v, at = self.tokens[self.pos]
        if k != kind:
            shown = repr(v) if v else "the end"
            raise UserError(f"query error at {at}: expected {what}, found {shown} in {self.text!r}")
        self.pos += 1
        return v, at

    def _or(self):
        node = self._and()
        while self._peek()[0] == "or":
            self.pos += 1
            node = ("or", node, self._and())
        return node

    def _and(self):
        node = self._atom()
        while self._peek()[0] == "and":
            self.pos += 1
            node = ("and", node, self._atom())
        return node

    def _atom(self):
        if self._peek()[0] == "lp":
            self.pos += 1
            node = self._or()
            self._take("rp", "')'")
            return node
        name, at = self._take("name", "a family name, q or '('")
        op, _ = self._take("op", f"a comparison (<, <=, =, >=, >, !=) after {name!r}")
        value, vat = self._take("num", f"a number after {name} {op}")
        if name == "q":
            return ("cmp", "q", op, float(value))
        column = self._column(name, at)
        if float(value) != int(float(value)):
            raise UserError(f"query error at {vat}: level {value} of {name} must be a whole number")
        return ("cmp", column, op, int(float(value)))

    def _column(self, name, at) -> int:
        if name in self.names:
            return self.names.index(name)
        m = re.fullmatch(r"[pt](\d+)", name)
        if m and 1 <= int(m.group(1)) <= len(self.names):
            return int(m.group(1)) - 1
        raise UserError(
            f"query error at {at}: unknown family {name!r} in {self.text!r} "
            f"(valid: {', '.join(self.names)}; q for the input quality)"
        )

    # --- evaluation --------------------------------------------------------------------
    def mask(self, tuples: np.ndarray, quality: np.ndarray | None = None) -> np.ndarray:
        def ev(node):
            if node[0] == "and":
                return ev(node[1]) & ev(node[2])
            if node[0] == "or":
                return ev(node[1]) | ev(node[2])
            _, column, op, value = node
            if column == "q":
                if quality is None:
                    raise UserError(
                        f"query {self.text!r} constrains q, but no quality score is available "
                        f"(set tomography.quality to a metric column, e.g. kid)"
                    )
                return OPS[op](quality, value)
            return OPS[op](tuples[:, column], value)

        return ev(self.tree)


def check_threshold(value, key: str = "query.min_accuracy") -> float:
    """A gate's threshold: a number in [0, 1] (an accuracy)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UserError(f"{key}={value}: an accuracy in [0, 1], e.g. {key}=0.8")
    return float(value)


def check_sample(value, key: str = "sample") -> int:
    """How many of a query's unmeasured tests to measure for its bound: a whole number ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{key}={value}: a whole number of tests ≥ 0 (0: measure none)")
    return value


def check_seed(value, key: str = "query.seed"):
    """The seed of a query's random sample: a whole number ≥ 0, or None (drawn per run)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise UserError(f"{key}={value}: a whole number ≥ 0, or null to draw one per run")
    return value
