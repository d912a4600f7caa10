"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/benchmarks/test_detection.py (the unit tier drives no CLI)."""

import pandas as pd
import pytest

from tests.helpers.cli_helpers import run_inprocess as run
from tests.unit.benchmarks.test_detection import DETECTOR, write_roboflow  # noqa: F401


@pytest.mark.slow  # a detector ground truth end to end: make test-all
def test_groundtruth_end_to_end_on_synthetic_files(tmp_path):
    root = tmp_path / "data"
    write_roboflow(root)
    r = run(
        [
            "stage=groundtruth",
            "benchmark=roboflow",
            "benchmark.levels=2",
            "progress=false",
            f"benchmark.data.root={root}",
            "benchmark.data.image_size=64",
            "benchmark.data.n=6",
            f"cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            *DETECTOR,
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    df = pd.read_parquet(next((tmp_path / "cache" / "groundtruth").glob("roboflow-*.parquet")))
    assert len(df) == 16 and {"psi", "delta", "ssim", "kid", "correct"} <= set(df.columns)
    assert df.ssim.between(-1, 1.0001).all() and (df.delta >= 0).all()
    clean = (df[["t1", "t2", "t3", "t4"]] == 0).all(axis=1)
    assert df.loc[clean, "ssim"].iloc[0] == pytest.approx(1.0, abs=1e-4)
    assert all(len(c) == 6 for c in df.correct)
