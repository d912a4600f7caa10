"""`make bench`'s gate rows, one side: `Tester.assert_no_regression` and `Tester.assert_robust` to a
decision, on an identical copy and on a regressed model of the digits CNN of scripts/compare_study.py
(625 configurations, 500 digits). The regressed model is compare_study's `half` (the same network
behind halved contrast). assert_no_regression: against a certified live run of the CNN (max_drop
0.02, the defaults otherwise). assert_robust: ROBUST_QUERY held to the release's estimated R(Q) less
ROBUST_MARGIN (the release's own tomography), measure="auto" (seed 0 where the call takes one); its
evaluations are the query's tests the model measured: the tomography's and those the gate sampled.

    python scripts/bench_gate.py CACHE_DIR WORK_DIR regression|robust    # prints one JSON line

scripts/bench.py runs it twice, with the testnav of this tree and with the one before the gate changed
(PYTHONPATH at an export of that commit: before the regression gate became a non-inferiority test, or
before R(Q)'s bound became a confidence sequence), so the same call is timed under both; each side
builds its own release and caches (the model's weights are shared)."""

from __future__ import annotations

import contextlib
import copy
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare_study  # noqa: E402

ROBUST_QUERY, ROBUST_MARGIN = "contrast <= 1 & motion_blur <= 1", 0.08


def decide(t, release) -> dict:
    """assert_no_regression's decision, the configurations it evaluated and its seconds."""
    t0 = time.perf_counter()
    try:
        c, decision = t.assert_no_regression(release, max_drop=0.02), "pass"
    except AssertionError:  # a fail, or (since issue 74) an Undecided
        c = t._comparison
        verdict = getattr(c, "verdict", None)
        decision = verdict.decision if verdict is not None else "fail"
    return {"decision": decision, "evaluations": int(c.evaluations), "seconds": time.perf_counter() - t0}


def robust(t, min_accuracy: float) -> dict:
    """assert_robust's decision on ROBUST_QUERY at `min_accuracy`, the query's tests measured, seconds."""
    import inspect

    seeded = {"seed": 0} if "seed" in inspect.signature(t.assert_robust).parameters else {}
    t0 = time.perf_counter()
    with contextlib.suppress(AssertionError):  # a fail or an Undecided: the answer is kept all the same
        t.assert_robust(ROBUST_QUERY, min_accuracy=min_accuracy, measure="auto", **seeded)
    seconds = time.perf_counter() - t0
    res = t._queries[ROBUST_QUERY]
    return {"decision": res["decision"], "evaluations": res["measured"] + res["sampled"], "seconds": seconds}


def main(cache: str, work: str, what: str) -> dict:
    """`what`: "regression" (assert_no_regression) or "robust" (assert_robust), on a copy and `half`."""
    import testnav

    net = compare_study.cnn(cache)
    same = compare_study.tester(copy.deepcopy(net), "mnist_cnn", f"{work}/copy")
    half = compare_study.tester(compare_study.HalfContrast(copy.deepcopy(net)).eval(), "mnist_cnn_half", f"{work}/half")
    first = compare_study.tester(copy.deepcopy(net), "mnist_cnn", f"{work}/release")
    out = {"testnav": str(Path(testnav.__file__).parent)}
    if what == "regression":
        release, _ = compare_study.certified(first)
        return out | {"copy": decide(same, release), "regressed": decide(half, release)}
    threshold = first.query(ROBUST_QUERY)["R_estimate"] - ROBUST_MARGIN
    return out | {
        "query": ROBUST_QUERY,
        "margin": ROBUST_MARGIN,
        "threshold": threshold,
        "copy": robust(same, threshold),
        "regressed": robust(half, threshold),
    }


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:4])))
