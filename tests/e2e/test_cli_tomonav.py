"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/searches/test_tomonav.py (the unit tier drives no CLI)."""

import numpy as np
import pandas as pd
import pytest

from testnav.core.lattice import Lattice
from tests.unit.searches.test_tomonav import table  # noqa: F401


def test_app_replay(tmp_path):
    import json

    from tests.helpers.cli_helpers import run_inprocess as run

    t = Lattice(3, 4).tuples
    rng = np.random.default_rng(0)
    pd.DataFrame(t, columns=["t1", "t2", "t3"]).assign(
        delta=t.sum(1) + rng.random(64), rho=-t.sum(1) + rng.random(64)
    ).to_csv(tmp_path / "ext.csv", index=False)
    r = run(
        [
            f"groundtruth.table={tmp_path / 'ext.csv'}",
            "search=tomonav",
            "budget=100",
            "seed=1",
            f"hydra.run.dir={tmp_path / 'replay'}",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "replay" / "summary.json").read_text())
    assert (s["search"], s["proposals"], s["unique"], s["final_recall"]) == ("tomonav", 100, 64, 1.0)


@pytest.mark.slow  # live TomoNav on the model; stage=live is in test_app: make test-all
def test_app_live(tmp_path):
    """The real live oracle on a 3⁴ lattice and 200 digits, in a cache of its own."""
    import json

    from tests.helpers.cli_helpers import run_inprocess as run

    r = run(
        [
            "stage=live",
            "search=tomonav",
            "benchmark.levels=3",
            "benchmark.test_per_class=20",
            "budget=30",
            "search.init_random=5",
            "progress=false",
            f"cache_dir={tmp_path / 'cache'}",  # its own: a shared one may hold these configurations measured
            f"hydra.run.dir={tmp_path / 'live'}",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "live" / "summary.json").read_text())
    assert s["live"] and s["search"] == "tomonav" and s["proposals"] == 30 and s["evaluations"] == s["unique"] == 30
    trace = pd.read_csv(tmp_path / "live" / "trace.csv")
    assert trace.new.all() and trace.inferences.iloc[-1] == 30 * 200
