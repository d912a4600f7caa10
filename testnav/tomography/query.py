"""The Boolean query language of TestifAI §4.1.2, with the quality constraint of §6.

    Q ::= name op severity | name op parameter | q op τ | Q ∧ Q | Q ∨ Q | ( Q )
    op ∈ <, ≤ (<=), =, ≥ (>=), >, ≠ (!=)

A severity is an entry of the family's table (the same whatever `levels=` picked; 0 is the identity);
only the ones the lattice tested may be named. The paper benchmarks' levels are their severities.
A parameter names the same entry as the reports print it, without spaces (`x0.5` or `×0.5`, `+0.3`,
`q80`) or quoted as printed (`'r 10, σ 3'`); the comparison is still on severities, so
`contrast <= x0.5` holds for contrast's entries up to the one of ×0.5, the milder ones.

`name` is a family name, or p1..pn / t1..tn by position; ∧ may be written &, and; ∨ as |, or.
∧ binds tighter than ∨. `q` compares the (measured or predicted) quality score q_σ with a
real threshold τ. A query denotes the set ⟦Q⟧ ⊆ Θ, and R(Q) is the mean robustness over it.
Errors point at the offending token: "query error at 8: unknown family 'blurr' …".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.intervals import check_confidence
from ..core.spec import Spec, whole
from ..errors import UserError
from ..paths import conf_defaults

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


# after a comparison: a number (followed by a separator), a quoted parameter, or an unquoted one
VALUE = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)(?=[\s()&|∧∨]|$)|(?P<str>'[^']*'|\"[^\"]*\")|"
    r"(?P<param>[^\s()&|∧∨<>=!≤≥≠][^\s()&|∧∨]*))"
)


def tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = (tokens and tokens[-1][0] == "op" and VALUE.match(text, pos)) or TOKEN.match(text, pos)
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
    """A parsed query over a lattice whose families are `names` (in order). `severities`: per family, the
    table entries its levels 1.. apply (None: each level is its severity, as the paper benchmarks'
    tables): a query names severities, which keep their meaning whatever `levels=` picked, and one the
    lattice did not test is refused with the tested ones listed. `parameters`: per family, its table's
    entries by parameter (core/severity.py's `parameters`; None: a query names severities only)."""

    def __init__(self, text: str, names: list[str], severities=None, parameters=None):
        self.text, self.names = text, list(names)
        self.severities = [tuple(s) for s in severities] if severities is not None else None
        self.parameters = list(parameters) if parameters is not None else None
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
        kind, value, vat = self._peek()
        if name == "q" or kind not in ("str", "param"):
            value, vat = self._take("num", f"a number after {name} {op}")
        else:
            self.pos += 1
        if name == "q":
            return ("cmp", "q", op, float(value))
        column = self._column(name, at)
        if kind in ("str", "param"):
            value = str(self._severity(column, value.strip("'\""), vat))
        if float(value) != int(float(value)):
            raise UserError(f"query error at {vat}: severity {value} of {name} must be a whole number")
        value = int(float(value))
        tested = self.severities[column] if self.severities is not None else None
        if tested is not None and value != 0 and value not in tested:
            raise UserError(
                f"query error at {vat}: {name} severity {self._shown(column, value)} was not tested in "
                f"{self.text!r} (tested: {', '.join(self._shown(column, s) for s in tested)}; 0 is the identity)"
            )
        return ("cmp", column, op, value)

    def _shown(self, column: int, severity: int) -> str:
        """A severity with its parameter as a query may write it, where known: "2 (x0.3)"."""
        table = self.parameters[column] if self.parameters is not None else {}
        by_entry = {s: p for p, s in table.items()}
        return f"{severity} ({by_entry[severity]})" if severity in by_entry else str(severity)

    def _severity(self, column: int, parameter: str, at: int) -> int:
        """The table entry of family `column` whose parameter is `parameter`, refused in one line if none."""
        from ..core.severity import spelled

        name = self.names[column]
        table = self.parameters[column] if self.parameters is not None else {}
        if spelled(parameter) in table:
            return table[spelled(parameter)]
        if not table:
            raise UserError(
                f"query error at {at}: {name}'s parameters are not known here; name a severity (a whole number) "
                f"in {self.text!r}"
            )
        tested = self.severities[column] if self.severities is not None else sorted(table.values())
        shown = ", ".join(self._shown(column, s) for s in tested)
        raise UserError(
            f"query error at {at}: {name} has no parameter {parameter!r} in {self.text!r} (tested: {shown}; "
            "or name a severity)"
        )

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
            levels = tuples[:, column]
            if self.severities is not None:  # the severity each level applies (0: the identity)
                levels = np.asarray([0, *self.severities[column]])[levels]
            return OPS[op](levels, value)

        return ev(self.tree)


MEASURE = ("auto", "never")  # an undecided gate measures the query's unmeasured tests, or does not


@dataclass(frozen=True)
@conf_defaults("settings/query")
class QuerySpec(Spec):
    """A query and its gate (stage=query, `Tester.query`, `Tester.assert_robust`); the defaults are
    conf/settings/query.yaml's. `expr`: the query; `min_accuracy`: the gate's threshold on R(Q)'s
    interval (None: no gate); `confidence`: the interval's; `measure`: auto (an undecided gate
    measures the query's unmeasured tests) or never; `sample`: without a gate, unmeasured tests
    measured for the interval; `seed`: of the random order in which unmeasured tests are measured
    (None: drawn per run, and the answer holds it)."""

    node = "query"
    expr: str | None
    min_accuracy: float | None
    confidence: float
    measure: str
    sample: int
    seed: int | None

    def __post_init__(self):
        if self.expr is not None and not isinstance(self.expr, str):
            raise UserError(f"query.expr={self.expr}: a query over the families' levels, e.g. query='brightness >= 3'")
        a = self.min_accuracy
        if a is not None and (isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 <= a <= 1):
            raise UserError(f"query.min_accuracy={a}: an accuracy in [0, 1], e.g. query.min_accuracy=0.8")
        check_confidence(self.confidence, "query.confidence")
        if self.measure not in MEASURE:
            raise UserError(f"query.measure={self.measure} (valid: {', '.join(MEASURE)})")
        if not whole(self.sample):
            raise UserError(f"query.sample={self.sample}: a whole number of tests ≥ 0 (0: measure none)")
        if self.seed is not None and not whole(self.seed):
            raise UserError(f"query.seed={self.seed}: a whole number ≥ 0, or null to draw one per run")
        self.as_float("min_accuracy", "confidence")
