"""The verdict rules of the claims ledger: how a claim's stated parts are decided, and how its verdict
follows from them.

A claim states parts (`Part`): an ordering, a value, a variance. Each is decided by one of the
functions below on the measured values (`beats`, `matches`, `wider`, `within`, `exceeds`,
`lower_errors`, `below`, `unbiased`), and `judge` grades the claim from them by `RULES`, the
paragraph claims.md opens with. `Claim` is one row of the ledger; its verdict and reason come from
`judge`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

HOLDS, PARTLY, NOT, NA = "holds", "holds partly", "does not hold", "not measurable"
VERDICTS = (HOLDS, PARTLY, NOT, NA)
# what one stated part of a claim came to
OK, SHORT, REVERSED, UNDECIDED = "holds", "does not hold", "reversed", "not measurable"

ALPHA = 0.05  # every test below, two-sided
MIN_SEEDS = 3  # fewer seeds (or repetitions) a side: not measurable
TOL_VALUE = 0.05  # a stated AUC-Recall or final recall, or the end of a stated range of them
TOL_MARGIN = 10.0  # a stated relative AUC margin, in percentage points
CLOSE_TO_ZERO = 0.02  # "close to zero" for a mean error of r_σ
COMPARABLE = 2.0  # "comparable" MSEs: within this factor
QUALITY_SHARE = 0.10  # "predictable" quality: mean |q̂ − q| within this share of q's range
BAND, BAND_SHARE = 0.1, 0.9  # §5.2.1: over 90 % of errors within ±0.1 (also the reading of "minimal error")
AGGREGATE = 0.07  # §9's "less than 7 %" aggregate error, read as |R̂(Q) − R(Q)| < 0.07

RULES = (
    "**Verdict rules.** Each claim is split into the parts it states, and one function "
    '(`judge` in testnav/figures/claims.py) grades every row from them. An ordering or "A beats B" '
    "holds when it is significant over seeds (or the study's repetitions) in the stated direction: "
    f"Welch's t-test (`scipy.stats.ttest_ind`, `equal_var=False`), two-sided, α = {ALPHA}; "
    '"wider variance" uses Levene\'s median-centred test (`scipy.stats.levene`), two estimates of the same '
    "tests a paired t-test on their squared errors (`scipy.stats.ttest_rel`), and one estimate against a "
    "reference value a one-sample t-test (`scipy.stats.ttest_1samp`); t > 0 is the stated direction. "
    "A part that is significant neither way is *within noise* and does not hold. The tests of one claim's "
    "parts are one family: their p-values are Holm-adjusted over the claim's tested parts "
    '(`statsmodels.stats.multitest.multipletests`, `method="holm"`) before any part is decided, so the '
    "chance that any part of a claim is called significant (held or reversed) by chance stays at α; a part "
    "that holds for *not* differing (a matched value, an unbiased estimate) keeps its unadjusted test, the "
    "stricter one for it. A stated value holds "
    "within the tolerance its row prints; a quantity without seeds (a ground truth, one study table) is "
    "compared as it is. A claim **holds** when every stated part holds; **holds partly** only when a "
    "separable stated part holds and another does not (the row names which); **does not hold** when "
    "its core statement fails or any stated ordering is reversed significantly; **not measurable** when "
    f"the data at hand cannot decide (a quantity defined on no test, fewer than {MIN_SEEDS} seeds a side). "
    'How the papers\' words are read (thresholds such as "7 %", "comparable", "close to zero"; '
    'scopes): docs/readings.md, "Claims ledger".'
)


@dataclass
class Part:
    """One stated part of a claim and what it came to: OK, SHORT, REVERSED or UNDECIDED, on `evidence`
    (the statistic or tolerance). A core part carries the claim's main statement; the others are
    separable from it and from each other."""

    name: str
    outcome: str
    evidence: str
    core: bool = True
    word: str = ""  # how the row says the outcome, where not the outcome itself ("within noise")
    p: float | None = None  # the part's two-sided p, where a test decides it by rejecting (Holm over a claim's)
    decide: object = field(default=None, repr=False, compare=False)  # p -> (outcome, word), for the regrade

    def __str__(self) -> str:
        return f"{self.name}: {self.word or self.outcome} ({self.evidence})"


def holm_parts(parts: list[Part]) -> list[Part]:
    """The parts with every rejection-decided test's p Holm-adjusted over the claim's such tests and
    its outcome decided again on it; the evidence names the adjusted p where there were two or more."""
    from statsmodels.stats.multitest import multipletests

    at = [k for k, p in enumerate(parts) if p.p is not None and p.decide is not None]
    if len(at) < 2:
        return list(parts)
    adjusted = multipletests([parts[k].p for k in at], method="holm")[1]
    out = list(parts)
    for k, q in zip(at, adjusted):
        outcome, word = out[k].decide(float(q))
        evidence = f"{out[k].evidence}; Holm over {len(at)}: {fmt_p(float(q))}"
        out[k] = replace(out[k], outcome=outcome, word=word, evidence=evidence)
    return out


def judge(parts: list[Part]) -> tuple[str, str]:
    """The verdict of a claim from its parts, by RULES, and the parts that decided it."""
    if not parts or all(p.outcome == UNDECIDED for p in parts):
        verdict = NA
    elif any(p.outcome == REVERSED for p in parts) or any(p.core and p.outcome == SHORT for p in parts):
        verdict = NOT
    elif any(p.core and p.outcome == UNDECIDED for p in parts):
        verdict = NA
    elif all(p.outcome == OK for p in parts):
        verdict = HOLDS
    elif any(p.outcome == OK for p in parts):
        verdict = PARTLY
    else:
        verdict = NOT
    if verdict == HOLDS:
        return verdict, ""
    said = []
    if verdict == PARTLY:
        said.append("holds: " + ", ".join(p.name for p in parts if p.outcome == OK))
    for outcome, word in ((REVERSED, "reversed"), (SHORT, "does not hold"), (UNDECIDED, "not measurable")):
        names = [p.name for p in parts if p.outcome == outcome]
        if names:
            said.append(f"{word}: " + ", ".join(names))
    return verdict, "; ".join(said)


def finite(x) -> np.ndarray:
    """x as a flat float array without its NaNs."""
    a = np.asarray(x, float).ravel()
    return a[~np.isnan(a)]


def fmt_t(t: float) -> str:
    """A t statistic as a row prints it (signed, two decimals; ±∞)."""
    return ("+∞" if t > 0 else "−∞") if math.isinf(t) else f"{t:+.2f}"


def fmt_p(p: float) -> str:
    """A p-value as a row prints it."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def side(t: float, p: float) -> str:
    """What a two-sided test says of a stated direction (t > 0): OK, REVERSED or SHORT (within noise)."""
    return OK if p < ALPHA and t > 0 else REVERSED if p < ALPHA and t < 0 else SHORT


def tested(name: str, t: float, p: float, evidence: str, core: bool = True) -> Part:
    """A part decided by a test: significant in the stated direction (t > 0), reversed, or within noise
    (at `p`, and again at its Holm-adjusted p over the claim's tests: `holm_parts`)."""

    def decide(q: float) -> tuple[str, str]:
        outcome = side(t, q)
        return outcome, ("no difference" if t == 0 else "within noise") if outcome == SHORT else ""

    outcome, word = decide(p)
    return Part(name, outcome, evidence, core, word, p, decide)


def welch(a, b) -> tuple[float, float] | None:
    """(t, two-sided p) of Welch's t-test, a against b; None below MIN_SEEDS a side. Two constant
    samples differ with certainty when their values differ (t = ±∞, p = 0), else not at all."""
    a, b = finite(a), finite(b)
    if min(len(a), len(b)) < MIN_SEEDS:
        return None
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        d = float(a[0] - b[0])
        return (0.0, 1.0) if d == 0 else (math.copysign(math.inf, d), 0.0)
    with warnings.catch_warnings():  # "precision loss" on near-identical samples: the test still decides
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_ind(a, b, equal_var=False)
    return float(r.statistic), float(r.pvalue)


def one_sample(d) -> tuple[float, float]:
    """(t, two-sided p) of a one-sample t-test of d against 0; a constant d is 0 or not with certainty."""
    d = finite(d)
    if np.ptp(d) == 0:
        return (0.0, 1.0) if d[0] == 0 else (math.copysign(math.inf, float(d[0])), 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.ttest_1samp(d, 0.0)
    return float(r.statistic), float(r.pvalue)


def too_few(name: str, what: str = "seeds", core: bool = True) -> Part:
    return Part(name, UNDECIDED, f"fewer than {MIN_SEEDS} {what} a side", core)


def beats(name: str, a, b, what: str = "seeds", core: bool = True) -> Part:
    """Stated: a's mean is above b's (pass the arrays the other way round for "lower is better")."""
    w = welch(a, b)
    if w is None:
        return too_few(name, what, core)
    return tested(name, *w, f"Welch t = {fmt_t(w[0])}, {fmt_p(w[1])}", core)


def matches(name: str, a, b, tol: float = TOL_VALUE, core: bool = True) -> Part:
    """Stated: a equals b. Holds when they differ neither significantly nor by more than `tol`."""
    w = welch(a, b)
    if w is None:
        return too_few(name, core=core)
    d = float(finite(a).mean() - finite(b).mean())
    ok = w[1] >= ALPHA and abs(d) <= tol
    return Part(
        name,
        OK if ok else SHORT,
        f"difference {d:+.3f}, tolerance ±{tol}; Welch t = {fmt_t(w[0])}, {fmt_p(w[1])}",
        core,
    )


def wider(name: str, a, b, what: str = "seeds", core: bool = True) -> Part:
    """Stated: a varies more than b (Levene's median-centred test)."""
    a, b = finite(a), finite(b)
    if min(len(a), len(b)) < MIN_SEEDS:
        return too_few(name, what, core)
    sa, sb = float(a.std(ddof=1)), float(b.std(ddof=1))
    if sa == 0 and sb == 0:
        return Part(name, SHORT, "both constant", core)
    with warnings.catch_warnings():  # constant deviations in both samples: W is 0/0, reported below
        warnings.simplefilter("ignore", RuntimeWarning)
        r = stats.levene(a, b)
    if np.isnan(r.statistic):
        return Part(name, SHORT, f"sd {sa:.4g} vs {sb:.4g}, Levene's W undefined (equal deviations)", core)
    return tested(
        name,
        sa - sb,
        float(r.pvalue),
        f"sd {sa:.4g} vs {sb:.4g}, Levene W = {r.statistic:.2f}, {fmt_p(r.pvalue)}",
        core,
    )


def within(name: str, ok: bool, evidence: str, core: bool = True) -> Part:
    """A stated value against the tolerance that `evidence` prints."""
    return Part(name, OK if ok else SHORT, evidence, core)


def exceeds(name: str, x: float, y: float, evidence: str, core: bool = True) -> Part:
    """Stated: x > y, for quantities without seeds (compared as they are)."""
    return Part(name, OK if x > y else REVERSED if x < y else SHORT, evidence, core)


def lower_errors(name: str, err_a, err_b, core: bool = True) -> Part:
    """Stated: estimate a is more accurate than b on the same tests (paired t-test on squared errors)."""
    a, b = np.asarray(err_a, float) ** 2, np.asarray(err_b, float) ** 2
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if len(a) < MIN_SEEDS:
        return too_few(name, "tests", core)
    if np.ptp(b - a) == 0:
        t, p = one_sample(b - a)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = stats.ttest_rel(b, a)  # the one-sample t-test of b − a: t > 0 where a's errors are smaller
        t, p = float(r.statistic), float(r.pvalue)
    return tested(
        name, t, p, f"MSE {a.mean():.4f} vs {b.mean():.4f} on {len(a)} tests, paired t = {fmt_t(t)}, {fmt_p(p)}", core
    )


def below(name: str, a, ref: float, what: str = "repetitions", core: bool = True) -> Part:
    """Stated: a's mean is below the reference value (one-sample t-test)."""
    a = finite(a)
    if len(a) < MIN_SEEDS:
        return too_few(name, what, core)
    t, p = one_sample(ref - a)  # t > 0 where a lies below ref
    return tested(name, t, p, f"mean {a.mean():.4f} vs {ref:.4f}, one-sample t = {fmt_t(t)}, {fmt_p(p)}", core)


def unbiased(name: str, diff, core: bool = True) -> Part:
    """Stated: an estimator is unbiased. Holds when the mean difference is not significantly nonzero."""
    d = finite(diff)
    if len(d) < MIN_SEEDS:
        return too_few(name, "tests", core)
    t, p = one_sample(d)
    return Part(
        name,
        OK if p >= ALPHA else SHORT,
        f"mean {d.mean():+.4f} over {len(d)} tests, one-sample t = {fmt_t(t)}, {fmt_p(p)}",
        core,
    )


@dataclass
class Claim:
    """One row. The verdict and the reason come from `judge(parts)`; `note` adds what was measured to
    explain it (a reason marked *conjecture* is not measured)."""

    paper: str  # TestNav | TestifAI
    where: str  # section, table or figure
    statement: str  # the paper's sentence or number
    scope: str  # the tables it is checked on here
    measured: str
    parts: list[Part] = field(default_factory=list)
    note: str = ""
    verdict: str = ""
    reason: str = ""

    def __post_init__(self):
        self.parts = holm_parts(self.parts)
        self.verdict, why = judge(self.parts)
        self.reason = "; ".join(x for x in (why, self.note) if x)


def missing(what: str) -> list[Part]:
    """The parts of a claim whose inputs are absent: not measurable, naming what is missing."""
    return [Part("its inputs", UNDECIDED, what)]
