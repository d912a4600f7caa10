"""R(Q) with its bounds, and the three-valued robustness gate (`Tester.assert_robust`, stage=query).

Both take the query and its settings as one `QuerySpec` (tomography/query.py; the defaults are
conf/settings/query.yaml's). `answer` gives R(Q) measured, predicted and estimated as TestifAI does, and beside them
[R_low, R_high] at `confidence` (tomography/bounds.py), after measuring `sample` of the query's
unmeasured tests (0: none; the bound then holds whatever the forest predicts, and is wide).

`gate` decides on that interval, never on the estimate:
* pass when R_low ≥ min_accuracy, fail when R_high < min_accuracy;
* otherwise, with measure="auto", measure more of the query's unmeasured tests (MIN_SAMPLE, then a
  quarter more at each look) and look again, until it decides or every test is measured (then only
  the inputs' sampling is left, and a gate still undecided says so); with measure="never", undecided.
  The bound holds at every look (a confidence sequence), so looking often costs no confidence.

The unmeasured tests are measured in a random order drawn per run from `seed`: a fresh one unless
given, so that two runs never share a sample by accident; the answer holds it (`seed`) and the
gate's line prints it, so that a run can be reproduced (`query.seed=`).
"""

from __future__ import annotations

import secrets

import numpy as np

from ..errors import UserError
from .bounds import MIN_SAMPLE, query_bound
from .query import Query, QuerySpec


class Undecided(AssertionError):
    """A gate that could not decide: R(Q)'s interval holds the threshold (exit status 3). An
    AssertionError, so that a pytest gate does not pass a model it cannot vouch for."""


def draw_seed() -> int:
    """A fresh seed for one run's random order of the unmeasured tests."""
    return secrets.randbits(32)


def _split(tomo, mask: np.ndarray, seed: int):
    """(known, unmeasured in the run's random order): the query's tests measured by the tomography,
    and the rest, in the order this run measures them."""
    measured = tomo.table.measured.to_numpy()
    order = tomo.sample_order(seed)
    known = np.flatnonzero(mask & measured)
    rest = order[(mask & ~measured)[order]]
    return known, rest


def bound(tomo, mask: np.ndarray, k: int, confidence: float, seed: int):
    """The Bound on R(Q) over ⟦Q⟧ (`mask`) with the first k of its unmeasured tests measured."""
    t = tomo.table
    known, rest = _split(tomo, mask, seed)
    k = min(k, len(rest))
    tomo.measure_tests(rest[:k])
    sampled = [tomo.sampled[int(i)] for i in rest[:k]]
    pred = t.r_pred.to_numpy()
    return query_bound(
        t.r_measured.to_numpy()[known],
        t.n.to_numpy()[known],
        np.array([s.mean() for s in sampled]),
        pred[rest[:k]],
        np.array([len(s) for s in sampled]),
        pred[rest[k:]],
        tomo.n_inputs,
        confidence,
    )


def _mask(tomo, text: str) -> np.ndarray:
    quality = tomo.table["q_est"].to_numpy() if "q_est" in tomo.table else None
    return Query(text, tomo.names, tomo.severities, tomo.parameters).mask(tomo.lattice.tuples, quality)


def _plain(tomo, text: str, mask: np.ndarray) -> dict:
    """R(Q) measured, predicted, estimated and true (replay), without a bound."""
    t = tomo.table[mask]
    return {
        "query": text,
        "tests": int(mask.sum()),
        "measured": int(t.measured.sum()),
        "inferred": int((~t.measured).sum()),
        "R_measured": float(t.r_measured.mean()) if t.measured.any() else None,
        "R_predicted": float(t.r_pred.mean()) if len(t) else None,
        "R_estimate": float(t.r_est.mean()) if len(t) else None,
        "R_true": float(t.r_true.mean()) if "r_true" in t and len(t) else None,
        "reused": int(tomo.reused),  # configurations an earlier verb measured, read instead of measured
        **({"measured_now": int(tomo.measured_now)} if tomo.reused else {}),
    }


def _with_bound(res: dict, b, confidence: float, seed: int) -> dict:
    return res | dict(
        R_low=b.low, R_high=b.high, R_corrected=b.estimate, confidence=confidence, sampled=b.sampled, seed=seed
    )


def answer(tomo, spec: QuerySpec) -> dict:
    """R(Q) of `spec.expr`: measured, predicted, estimated (measured tests as measured, the rest
    predicted), true (replay), and [R_low, R_high] at `spec.confidence` after measuring `spec.sample`
    of its unmeasured tests, drawn at random from `spec.seed` (a fresh one when None; the answer
    holds it)."""
    text = spec.expr
    if text is None:
        raise UserError("query.expr=null: give the query, e.g. query='brightness >= 3 & zoom <= 1'")
    mask = _mask(tomo, text)
    out = _plain(tomo, text, mask)
    if mask.any():
        seed = draw_seed() if spec.seed is None else int(spec.seed)
        out = _with_bound(out, bound(tomo, mask, spec.sample, spec.confidence, seed), spec.confidence, seed)
    return out


def schedule(unmeasured: int) -> list[int]:
    """The sample sizes a gate looks at: none, MIN_SAMPLE, then a quarter more each look, then all."""
    sizes, k = [0], MIN_SAMPLE
    while k < unmeasured:
        sizes.append(k)
        k += max(k // 4, 1)
    return [*sizes, unmeasured] if unmeasured else sizes


def gate(tomo, spec: QuerySpec) -> dict:
    """The answer to `spec.expr` with the gate's `decision` at `spec.min_accuracy` (pass, fail,
    undecided), `sampled` (the query's unmeasured tests measured to decide), `seed` (of their random
    order) and its one `line`."""
    text, min_accuracy, confidence, measure = spec.expr, spec.min_accuracy, spec.confidence, spec.measure
    if min_accuracy is None:
        raise UserError(f"query {text!r}: a gate needs query.min_accuracy, the accuracy R(Q) must reach")
    mask = _mask(tomo, text)
    if not mask.any():
        raise UserError(f"query {text!r} selects no configuration: there is nothing to hold to a threshold")
    seed = draw_seed() if spec.seed is None else int(spec.seed)
    _, rest = _split(tomo, mask, seed)
    looks = schedule(len(rest)) if measure == "auto" and tomo.measure is not None else [0]
    for k in looks:
        b = bound(tomo, mask, k, confidence, seed)
        decision = "pass" if b.low >= min_accuracy else "fail" if b.high < min_accuracy else None
        if decision:
            break
    res = _with_bound(_plain(tomo, text, mask), b, confidence, seed)
    decision = decision or "undecided"
    res.update(min_accuracy=float(min_accuracy), decision=decision, passed=decision == "pass")
    if b.unmeasured == 0:
        why = "only the inputs' sampling is left (more inputs would decide)"
    elif measure == "never":
        why = "measure='never' (measure='auto' measures the query's unmeasured tests until it decides)"
    else:
        why = "nothing more can be measured here"
    res["line"] = gate_line(res, everything=b.unmeasured == 0, undecided_why=why)
    return res


def gate_line(res: dict, everything: bool = False, undecided_why: str = "") -> str:
    """The one line a CI log shows: the query, the interval, the threshold, the tests measured."""
    interval = f"R(Q) in [{res['R_low']:.3f}, {res['R_high']:.3f}] at {res['confidence']:.0%}"
    tests = (
        f"{res['measured'] + res['sampled']} of {res['tests']} tests measured "
        f"({res['sampled']} for this gate, seed {res['seed']}), the rest predicted"
        if not everything
        else f"all {res['tests']} tests measured ({res['sampled']} for this gate, seed {res['seed']})"
    )
    if res.get("reused"):
        tests += f"; {res['reused']:,} configurations read from what earlier verbs measured"
        tests += ", none measured now" if not res.get("measured_now") else f", {res['measured_now']:,} measured now"
    what = {"pass": "passed", "fail": "failed", "undecided": "undecided"}[res["decision"]]
    a = res["min_accuracy"]
    why = {
        "pass": f"R_low {res['R_low']:.3f} ≥ min_accuracy {a:g}",
        "fail": f"R_high {res['R_high']:.3f} < min_accuracy {a:g}",
        "undecided": f"the interval holds min_accuracy {a:g}: {undecided_why}",
    }[res["decision"]]
    return f"robustness gate {what}: query {res['query']!r}: {interval} ({tests}); {why}"
