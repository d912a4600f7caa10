"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/stopping/test_certificate.py (the unit tier drives no CLI)."""

import json

import pandas as pd

from testnav.groundtruth.synthetic import synthetic_table


def test_trace_summary_and_stop_at_through_run_py(tmp_path):
    from tests.e2e.test_app import run

    synthetic_table("pairs", n=3, levels=5, seed=0).to_csv(tmp_path / "gen.csv", index=False)
    r = run(
        [
            f"groundtruth.table={tmp_path / 'gen.csv'}",
            "search=random",
            "budget=400",
            "reuse_runs=false",
            "search.stop_at=0.95",
            f"hydra.run.dir={tmp_path / 'run'}",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    trace = pd.read_csv(tmp_path / "run" / "trace.csv")
    assert list(trace.columns) == [
        "proposal",
        "t1",
        "t2",
        "t3",
        "new",
        "unique",
        "delta",
        "rho",
        "in_pstar",
        "inferences",
        "p_complete",
        "p_good",
    ]
    # a random permutation has seen all 125 configurations after 125 proposals: certain, so it stops by then
    assert s["stopped_at"] == s["proposals"] == len(trace) <= 125 and s["p_complete"] >= 0.95 and s["stop_at"] == 0.95
    assert trace.p_complete.between(0, 1).all() and trace.p_complete.iloc[-1] == s["p_complete"]
