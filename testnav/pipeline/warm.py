"""The warm start: a comparison that measures what it needs on the new model and bounds the rest.

A comparison in full (measure="all") evaluates on the new model every configuration the baseline
measured. The warm start (measure="auto", the default, or "never") measures, in this order:

1. the baseline's front (its configurations no other beats on both δ and ρ): where the release was
   weakest for its fidelity, so where a regression matters most; then the baseline's configurations
   where one family acts alone (each family's own curve: which family a drop comes from,
   pipeline/localise.py);
2. where the surrogate expects a drop beyond `max_drop`, `step` configurations a round, refitted
   after each (ChangeSurrogate below). Once a configuration fails the gate, rounds go on only while
   they find a worse drop;
3. a seeded simple random sample of the rest, which bounds them: a configuration of the rest is
   *bad* when it is not cleared, its one-sided upper bound on the paired drop above `max_drop`
   (pipeline/noninferiority.py; so every configuration that truly lost more than max_drop is bad,
   but for the bound's 1 − confidence). From the bad ones seen in the sample,
   tomography/bounds.py's `share_bound` gives at `confidence` (exact hypergeometric; Bonferroni over
   looks) how many of the configurations left unmeasured can be bad. The first look's sample is the
   smallest that, holding none, bounds them at `tolerance` × the baseline's configurations; with
   measure="auto" it then doubles, until the gate decides or the whole rest is measured.

The gate decides on measurements and the bound, never on a prediction: it fails when a measured
configuration is shown to drop beyond `max_drop` (one-sided score tests, Holm over the
configurations measured); it passes when every configuration measured for steps 1–2 (or before) is
cleared and the sample's bad ones plus the bound on the predicted ones are at most `tolerance` × the
baseline's configurations; it stops undecided when a configuration of steps 1–2 is not cleared (no
sample can clear it; more inputs would), or after the first look with measure="never"; otherwise it
measures on. With every configuration measured it is the full comparison. The configurations left are
predicted (r̂ = the baseline's accuracy + the surrogate's change) and so reported, with the bound.
Beside it, the new model's mean accuracy over the baseline's configurations gets the
prediction-powered interval of tomography/bounds.py's `query_bound` on the same sample.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core.pareto import nondominated_mask
from ..tomography.bounds import MIN_SAMPLE, Bound, ShareBound, planned_sample, query_bound, share_bound

STEP = 16  # configurations the surrogate picks per round
WHY = ("measured before", "front", "family curve", "surrogate", "sample")


class ChangeSurrogate:
    """The new model's accuracy, seeded from the baseline's: r̂_new(θ) = r_base(θ) + w·ĉ(θ), with ĉ a
    random forest (TomoNav's settings, tomography/surrogate.py) from levels to the change measured on
    the new model, and w = max(0, 1 − s²/D²) the weight of the measurements against the prior "no
    change": s² the mean variance of a measured change under no change ((b + c)/N², McNemar's flips),
    D² the mean squared measured change. Changes within their noise keep the prior (w = 0: the
    baseline's accuracy, exactly, for an identical copy); the more the new model's measurements
    disagree with it, the less it weighs."""

    def __init__(self, seed: int):
        self.seed, self.weight, self.forest = seed, 0.0, None

    def fit(self, thetas: np.ndarray, changes: np.ndarray, flips: np.ndarray, inputs: int) -> ChangeSurrogate:
        from sklearn.ensemble import RandomForestRegressor

        from ..core.exact import relative_grid
        from ..tomography.surrogate import FOREST

        changes = np.asarray(changes, float)
        disagreement = float(np.mean(changes**2)) if len(changes) else 0.0
        noise = float(np.mean(np.asarray(flips, float))) / inputs**2 if len(changes) else 0.0
        self.weight = max(0.0, 1.0 - noise / disagreement) if disagreement > 0 else 0.0
        self.forest = None
        if self.weight > 0 and len(changes) >= 2:
            forest = RandomForestRegressor(random_state=self.seed, **FOREST)
            self.forest = forest.fit(np.asarray(thetas), relative_grid(changes))
        return self

    def predict(self, thetas: np.ndarray) -> np.ndarray:
        """The predicted change in accuracy at each θ (0 where the prior holds)."""
        if self.forest is None or not len(thetas):
            return np.zeros(len(thetas))
        return self.weight * self.forest.predict(np.asarray(thetas))


@dataclass
class WarmStart:
    """What the warm start measured and what it predicts. `why`: θ → why it was measured (WHY);
    `predicted`: the baseline's configurations left unmeasured (t1..tn, before, after, change: the
    surrogate's); `bound`: how many of them can hide a drop beyond `max_drop` (None when none was
    left); `mean`: the new model's mean accuracy over the baseline's configurations (query_bound);
    `decision`: pass, fail, undecided, or complete (everything measured: the full comparison decides);
    `measure`: auto (the sample grew until the gate decided) or never (one look)."""

    why: dict = field(repr=False)
    predicted: pd.DataFrame = field(repr=False)
    bound: ShareBound | None
    mean: Bound | None
    mean_before: float
    configurations: int
    max_drop: float
    tolerance: float
    confidence: float
    weight: float
    decision: str
    measure: str

    @property
    def allowed(self) -> int:
        return allowed(self.tolerance, self.configurations)

    @property
    def counts(self) -> dict:
        return {w: sum(v == w for v in self.why.values()) for w in WHY}

    def sentence(self) -> str:
        """Which configurations were measured and predicted, and what the bound says about the predicted ones."""
        c = self.counts
        measured = ", ".join(f"{n} {w}" for w, n in c.items() if n)
        head = f"warm start: {len(self.why):,} of the baseline's {self.configurations:,} configurations measured ({measured})"
        if not len(self.predicted):
            return head + ", none predicted"
        b = self.bound
        assert b is not None  # predicted configurations have their bound
        seen = "none" if not b.seen else f"{b.seen}"
        out = (
            f"{head}, {len(self.predicted):,} predicted: at most {b.bad_high:,} of them not cleared of a drop beyond "
            f"{100 * self.max_drop:g} points ({self.confidence:.0%} confidence, {b.sampled} of {b.population:,} "
            f"sampled at random, {seen} not cleared; {self.allowed:,} allowed)"
        )
        if self.mean is not None:
            out += (
                f"; mean accuracy over the baseline's configurations {self.mean_before:.3f} → "
                f"[{self.mean.low:.3f}, {self.mean.high:.3f}]"
            )
        return out

    @property
    def summary(self) -> dict:
        b = self.bound
        return {
            "mode": "warm",
            "measured": len(self.why),
            "measured_for": self.counts,
            "predicted": len(self.predicted),
            "decision": self.decision,
            "tolerance": self.tolerance,
            "prior_weight": round(self.weight, 4),
            "bound": None
            if b is None
            else {
                "population": b.population,
                "sampled": b.sampled,
                "not_cleared_in_sample": b.seen,
                "predicted_not_cleared_at_most": b.bad_high,
                "allowed": self.allowed,
                "confidence": b.confidence,
                "looks": b.look + 1,
            },
            "mean_accuracy": None
            if self.mean is None
            else {"before": self.mean_before, "low": self.mean.low, "high": self.mean.high},
        }


def allowed(tolerance: float, configurations: int) -> int:
    return int(np.floor(tolerance * configurations + 1e-9))


def front_of(base) -> list[tuple]:
    """The baseline's front: its configurations no other beats on both δ and ρ (none without ρ)."""
    ok = np.isfinite(base.rho)
    if not ok.any():
        return []
    delta = np.maximum(base.psi_clean - base.psi[ok], 0.0)
    mask = nondominated_mask(delta, base.rho[ok])
    return [tuple(map(int, t)) for t in base.thetas[ok][mask]]


def curves_of(base) -> list[tuple]:
    """The baseline's configurations where one family acts alone: each family's own curve, which says
    which family a drop comes from (pipeline/localise.py)."""
    return [tuple(map(int, t)) for t in base.thetas if (np.asarray(t) > 0).sum() == 1]


class PairedMeasurements:
    """The new model's measurements of the baseline's configurations, paired with the baseline's
    outcomes on the same inputs, as the warm start grows them: θ → per-input outcomes (`got`), why
    each was measured (`why`), and McNemar's test against the baseline per θ, computed once; with
    the gate's settings (max_drop, confidence, correction: a CompareSpec's)."""

    def __init__(self, base, known: dict, evaluate: Callable[[list], dict], spec):
        self.base, self.evaluate = base, evaluate
        self.max_drop, self.confidence = spec.max_drop, spec.confidence
        self.thetas = [tuple(map(int, t)) for t in base.thetas]
        self.row = {t: i for i, t in enumerate(self.thetas)}
        self.got = {t: np.asarray(v, bool) for t, v in known.items() if t in self.row}
        self.why = {t: "measured before" for t in self.got}
        self.tests: dict = {}
        self.high: dict = {}  # θ → the upper bound on its drop, computed once

    def add(self, ts, reason: str) -> None:
        ts = [t for t in ts if t not in self.got]
        if ts:
            self.got.update({t: np.asarray(v, bool) for t, v in self.evaluate(ts).items()})
            self.why.update({t: reason for t in ts})

    def rest(self) -> list:
        """The baseline's configurations not measured yet, in its order."""
        return [t for t in self.thetas if t not in self.got]

    def change(self, t) -> float:
        return float(self.got[t].mean() - self.base.correct[self.row[t]].mean())

    def test(self, t) -> tuple[int, int, float]:
        from .paired import mcnemar_exact

        if t not in self.tests:
            self.tests[t] = mcnemar_exact(self.base.correct[self.row[t]], self.got[t])
        return self.tests[t]

    def failing(self) -> bool:
        """A measured configuration is shown to drop beyond max_drop (the gate's one-sided tests, Holm
        over those measured: pipeline/noninferiority.py)."""
        from .noninferiority import beyond_p, holm

        flips = np.array([self.test(t)[:2] for t in self.got], float).reshape(-1, 2)
        return bool(holm(beyond_p(flips[:, 0], flips[:, 1], self.base.inputs, self.max_drop), self.confidence).any())

    def cleared(self, t) -> bool:
        """θ's one-sided upper bound on its paired drop is within max_drop."""
        from .noninferiority import drop_bound

        if t not in self.high:
            b, c, _ = self.test(t)
            self.high[t] = drop_bound(b, c, self.base.inputs, self.confidence)
        return self.high[t] <= self.max_drop

    def refit(self, surrogate: ChangeSurrogate) -> ChangeSurrogate:
        ts = list(self.got)
        flips = [self.test(t)[0] + self.test(t)[1] for t in ts]
        return surrogate.fit(np.array(ts), np.array([self.change(t) for t in ts]), np.array(flips), self.base.inputs)


def warm_measure(base, known: dict, evaluate: Callable[[list], dict], spec, step: int = STEP) -> WarmStart:
    """Measure on the new model what the comparison with `base` (a RunRecord) needs, as the module
    says, under `spec` (a CompareSpec: max_drop, confidence, correction, tolerance, seed). `known`: θ →
    per-input outcomes the new model has already (its clean set among them); `evaluate(thetas)`
    measures a list of θ on it and returns θ → outcomes. Deterministic for a seed."""
    m = PairedMeasurements(base, known, evaluate, spec)
    seed, tolerance = spec.seed, spec.tolerance
    surrogate = ChangeSurrogate(seed)
    m.add(front_of(base), "front")
    m.add(curves_of(base), "family curve")
    surrogate_rounds(m, surrogate, step)

    # the rest: predicted from the surrogate as fitted now, bounded by a random sample of it
    rest = m.rest()
    pred = m.refit(surrogate).predict(np.array(rest)) if rest else np.zeros(0)
    order = np.random.default_rng(seed).permutation(len(rest))
    rest, pred = [rest[i] for i in order], pred[order]
    k, _, bound, decision = sample_rest(m, rest, allowed(tolerance, len(m.thetas)), spec.measure == "auto")
    predicted, mean = predictions(m, rest, pred, k)
    return WarmStart(
        why=m.why,
        predicted=predicted,
        bound=bound if len(predicted) else None,
        mean=mean,
        mean_before=float(base.psi.mean()),
        configurations=len(m.thetas),
        max_drop=spec.max_drop,
        tolerance=tolerance,
        confidence=spec.confidence,
        weight=surrogate.weight,
        decision=decision,
        measure=spec.measure,
    )


def surrogate_rounds(m: PairedMeasurements, surrogate: ChangeSurrogate, step: int) -> None:
    """Step 2: `step` configurations a round where the refitted surrogate expects a drop beyond
    `max_drop`, until it expects none, or a failure is found and the worst drop no longer moves."""
    worst = min((m.change(t) for t in m.got), default=0.0)
    while rest := m.rest():
        pred = m.refit(surrogate).predict(np.array(rest))
        order = np.argsort(pred, kind="stable")
        pick = [rest[i] for i in order[:step] if pred[i] < -m.max_drop]
        if not pick:
            return
        m.add(pick, "surrogate")
        now = min(m.change(t) for t in m.got)
        if m.failing() and now >= worst:
            return  # a failure found, and the worst drop no longer moves
        worst = min(worst, now)


def sample_rest(m: PairedMeasurements, rest: list, allowed_: int, more: bool = True):
    """Step 3: the first `k` of `rest` (shuffled) measured, k doubling per look (with `more`; else one
    look) until the gate decides or all of it is measured. A sampled configuration counts against
    `allowed_` unless it is cleared (its upper bound on the drop within max_drop), as do those the
    bound allows among the rest unmeasured. Returns (k, look, the bound, the decision: pass, fail,
    undecided, or complete)."""
    k = planned_sample(len(rest), allowed_, m.confidence) if rest else 0
    sampled = set(rest)
    bound, decision, look = None, "complete", 0
    while rest:
        m.add(rest[:k], "sample")
        seen = sum(not m.cleared(t) for t in rest[:k])
        bound = share_bound(seen, k, len(rest), m.confidence, look)
        if m.failing():
            decision = "fail"
            break
        if k == len(rest):
            break
        if not all(m.cleared(t) for t in m.got if t not in sampled):
            decision = "undecided"  # a configuration measured for a reason is not cleared: sampling cannot pass
            break
        if seen + bound.bad_high <= allowed_:
            decision = "pass"
            break
        if not more:
            decision = "undecided"
            break
        k, look = min(2 * k if k else MIN_SAMPLE, len(rest)), look + 1
    if decision == "complete" and m.failing():
        decision = "fail"
    return k, look, bound, decision


def predictions(m: PairedMeasurements, rest: list, pred: np.ndarray, k: int):
    """The configurations left after the sample (`rest[k:]`), predicted as the baseline's accuracy plus
    the surrogate's change, and the new model's mean accuracy over the baseline's configurations with
    its prediction-powered interval (query_bound: the sample rectifies the predictions)."""
    n, before = m.base.inputs, m.base.psi
    sampled, left = rest[:k], rest[k:]
    r = lambda ts: np.array([m.got[t].mean() for t in ts])  # noqa: E731
    b = lambda ts: np.array([before[m.row[t]] for t in ts])  # noqa: E731
    p_sampled, p_left = np.clip(b(sampled) + pred[:k], 0, 1), np.clip(b(left) + pred[k:], 0, 1)
    in_sample = set(sampled)
    measured_first = [t for t in m.got if t not in in_sample]
    mean = query_bound(
        r(measured_first),
        np.full(len(measured_first), n),
        r(sampled),
        p_sampled,
        np.full(len(sampled), n),
        p_left,
        n,
        m.confidence,
    )
    cols = [f"t{i + 1}" for i in range(m.base.thetas.shape[1])]
    predicted = pd.DataFrame(np.array(left, dtype=np.int64).reshape(len(left), len(cols)), columns=cols)
    predicted["before"], predicted["after"] = b(left), p_left
    predicted["change"] = p_left - b(left)
    return predicted, mean
