"""R(Q) with its bounds, and the three-valued robustness gate (`Tester.assert_robust`, stage=query).

Both take the query and its settings as one `QuerySpec` (tomography/query.py; the defaults are
conf/settings/query.yaml's). `answer` gives R(Q) measured, predicted and estimated as TestifAI
does, and beside them [R_low, R_high] at `confidence` (tomography/bounds.py), after measuring
`sample` of the query's unmeasured tests (0: none; the bound then holds whatever the forest
predicts, and is wide).

`gate` decides on that interval, never on the estimate:
* pass when R_low ≥ min_accuracy, fail when R_high < min_accuracy;
* otherwise, with measure="auto", measure more of the query's unmeasured tests (in the tomography's
  seeded random order: MIN_SAMPLE, then doubling) and look again, until it decides or every test
  is measured (then only the inputs' sampling is left, and a gate still undecided says so);
  with measure="never", undecided.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import UserError
from .bounds import MIN_SAMPLE, query_bound
from .query import Query, QuerySpec


class Undecided(AssertionError):
    """A gate that could not decide: R(Q)'s interval holds the threshold (exit status 3). An
    AssertionError, so that a pytest gate does not pass a model it cannot vouch for."""


def _split(tomo, mask: np.ndarray):
    """(known, unmeasured in the sample order): the query's tests measured by the tomography, and the
    rest, ordered as queries measure them."""
    measured = tomo.table.measured.to_numpy()
    order = tomo.sample_order()
    known = np.flatnonzero(mask & measured)
    rest = order[(mask & ~measured)[order]]
    return known, rest


def bound(tomo, mask: np.ndarray, k: int, confidence: float, look: int = 0):
    """The Bound on R(Q) over ⟦Q⟧ (`mask`) with the first k of its unmeasured tests measured."""
    t = tomo.table
    known, rest = _split(tomo, mask)
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
        look,
    )


def answer(tomo, spec: QuerySpec) -> dict:
    """R(Q) of `spec.expr`: measured, predicted, estimated (measured tests as measured, the rest
    predicted), true (replay), and [R_low, R_high] at `spec.confidence` after measuring `spec.sample`
    of its unmeasured tests."""
    text, confidence = spec.expr, spec.confidence
    if text is None:
        raise UserError("query.expr=null: give the query, e.g. query='brightness >= 3 & zoom <= 1'")
    q = Query(text, tomo.names)
    quality = tomo.table["q_est"].to_numpy() if "q_est" in tomo.table else None
    mask = q.mask(tomo.lattice.tuples, quality)
    t = tomo.table[mask]
    out = {
        "query": text,
        "tests": int(mask.sum()),
        "measured": int(t.measured.sum()),
        "inferred": int((~t.measured).sum()),
        "R_measured": float(t.r_measured.mean()) if t.measured.any() else None,
        "R_predicted": float(t.r_pred.mean()) if len(t) else None,
        "R_estimate": float(t.r_est.mean()) if len(t) else None,
        "R_true": float(t.r_true.mean()) if "r_true" in t and len(t) else None,
    }
    if len(t):
        b = bound(tomo, mask, spec.sample, confidence)
        out.update(R_low=b.low, R_high=b.high, R_corrected=b.estimate, confidence=confidence, sampled=b.sampled)
    return out


def gate(tomo, spec: QuerySpec) -> dict:
    """The answer to `spec.expr` with the gate's `decision` at `spec.min_accuracy` (pass, fail,
    undecided), `sampled` (the query's unmeasured tests measured to decide) and its one `line`."""
    text, min_accuracy, confidence, measure = spec.expr, spec.min_accuracy, spec.confidence, spec.measure
    if min_accuracy is None:
        raise UserError(f"query {text!r}: a gate needs query.min_accuracy, the accuracy R(Q) must reach")
    q = Query(text, tomo.names)
    quality = tomo.table["q_est"].to_numpy() if "q_est" in tomo.table else None
    mask = q.mask(tomo.lattice.tuples, quality)
    if not mask.any():
        raise UserError(f"query {text!r} selects no configuration: there is nothing to hold to a threshold")
    _, rest = _split(tomo, mask)
    schedule = [0]
    if measure == "auto" and tomo.measure is not None:
        k = MIN_SAMPLE
        while k < len(rest):
            schedule.append(k)
            k *= 2
        schedule.append(len(rest))
        schedule = sorted(set(schedule))
    looks = 0
    for k in schedule:
        b = bound(tomo, mask, k, confidence, looks)
        looks += MIN_SAMPLE <= b.sampled < len(rest)  # looks that spent α on the configurations' term
        decision = "pass" if b.low >= min_accuracy else "fail" if b.high < min_accuracy else None
        if decision:
            break
    res = answer(tomo, replace(spec, sample=b.sampled))
    res.update(R_low=b.low, R_high=b.high, R_corrected=b.estimate, sampled=b.sampled)
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
        f"({res['sampled']} for this gate), the rest predicted"
        if not everything
        else f"all {res['tests']} tests measured ({res['sampled']} for this gate)"
    )
    what = {"pass": "passed", "fail": "failed", "undecided": "undecided"}[res["decision"]]
    a = res["min_accuracy"]
    why = {
        "pass": f"R_low {res['R_low']:.3f} ≥ min_accuracy {a:g}",
        "fail": f"R_high {res['R_high']:.3f} < min_accuracy {a:g}",
        "undecided": f"the interval holds min_accuracy {a:g}: {undecided_why}",
    }[res["decision"]]
    return f"robustness gate {what}: query {res['query']!r}: {interval} ({tests}); {why}"
