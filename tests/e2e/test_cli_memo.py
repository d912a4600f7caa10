"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/searches/test_memo.py (the unit tier drives no CLI)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.helpers.cli_helpers import run_inprocess
from tests.unit.searches.test_memo import EDITS, edit, package_copy, prose_edit  # noqa: F401


def test_relaunched_run_recomputes_after_a_surrogate_edit(tmp_path, monkeypatch, package_copy):
    rng = np.random.default_rng(0)
    theta = np.stack(np.meshgrid(*[np.arange(3)] * 3, indexing="ij"), -1).reshape(-1, 3)
    table = pd.DataFrame(theta, columns=["t1", "t2", "t3"]).assign(delta=rng.random(27), rho=rng.random(27))
    table.to_csv(tmp_path / "t.csv", index=False)
    args = [f"groundtruth.table={tmp_path / 't.csv'}", "search=tomonav", "budget=40", f"cache_dir={tmp_path / 'cache'}"]

    def launch(i):
        r = run_inprocess([*args, f"hydra.run.dir={tmp_path / f'run{i}'}"], tmp_path)
        assert r.returncode == 0, r.stderr
        return "(reused the finished run" in r.stdout

    assert not launch(0)
    assert launch(1), "an unchanged relaunch must reuse the finished run"
    prose_edit(package_copy, "stopping/level_surrogate.py")
    assert launch(2), "a docstring edit must keep the finished run"
    edit(package_copy, "stopping/level_surrogate.py", *EDITS["stopping/level_surrogate.py"])
    assert not launch(3), "a surrogate edit must recompute the run, not link the old summary"
