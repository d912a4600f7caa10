"""`make bench`'s regression-gate rows, one side: `Tester.assert_no_regression` to a decision, on an
identical copy and on a regressed model, against a certified live run of the digits CNN of
scripts/compare_study.py (625 configurations, 500 digits; max_drop 0.02, the defaults otherwise).
The regressed model is compare_study's `half` (the same network behind halved contrast).

    python scripts/bench_gate.py CACHE_DIR WORK_DIR    # prints one JSON line

scripts/bench.py runs it twice, with the testnav of this tree and with the one before the gate became
a non-inferiority test (PYTHONPATH at an export of that commit), so the same call is timed under
both; each side builds its own release and caches (the model's weights are shared)."""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare_study  # noqa: E402


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


def main(cache: str, work: str) -> dict:
    import testnav

    net = compare_study.cnn(cache)
    release, _ = compare_study.certified(compare_study.tester(copy.deepcopy(net), "mnist_cnn", f"{work}/release"))
    same = compare_study.tester(copy.deepcopy(net), "mnist_cnn", f"{work}/copy")
    half = compare_study.tester(compare_study.HalfContrast(copy.deepcopy(net)).eval(), "mnist_cnn_half", f"{work}/half")
    return {
        "testnav": str(Path(testnav.__file__).parent),
        "copy": decide(same, release),
        "regressed": decide(half, release),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
