"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/groundtruth/test_groundtruth.py (the unit tier drives no CLI)."""

import json

import pandas as pd
import pytest

from testnav.groundtruth.compute import compute_groundtruth, read_meta
from tests.conftest import small_benchmark


@pytest.mark.slow  # two ground truths of the reduced mnist5k (13 s): make test-all
def test_a_search_reading_no_signal_leaves_the_signals_part_uncomputed(tmp_path):
    """The table is cached as parts (testnav/groundtruth/compute.py): a search on δ and ρ computes the
    objectives part alone; a later signal search computes the signals part alone, reusing the
    objectives; and the table assembled from the two is byte for byte the one a single pass writes."""
    from tests.helpers.cli_helpers import run_inprocess

    cache = tmp_path / "cache"
    tiny = ["benchmark.levels=2", "benchmark.test_per_class=5"]
    common = [*tiny, "budget=10", "seed=0", "progress=false", f"cache_dir={cache}"]
    signals = ["nac", "snac", "kmnc", "tknc", "deepgini", "lsa", "dsa"]
    first = run_inprocess([*common, "search=random", f"hydra.run.dir={tmp_path / 'random'}"], tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    (table,) = (cache / "groundtruth").glob("mnist5k-*.parquet")
    (objectives,) = (cache / "groundtruth" / "parts").glob("mnist5k-objectives-*.parquet")
    assert not list((cache / "groundtruth" / "parts").glob("*signals*"))  # never computed, nor calibrated
    assert read_meta(table)["parts"]["signals"] is None
    assert not set(signals) & set(pd.read_parquet(table).columns)
    written = objectives.stat().st_mtime_ns

    second = run_inprocess([*common, "search=kmnc", f"hydra.run.dir={tmp_path / 'kmnc'}"], tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert list((cache / "groundtruth").glob("mnist5k-*.parquet")) == [table]  # the same table, now with both parts
    assert objectives.stat().st_mtime_ns == written  # the objectives part reused, not recomputed
    meta = read_meta(table)
    assert [(r["parts"], r["chunks_computed"]) for r in meta["runs"]] == [(["objectives"], 4), (["signals"], 4)]
    assert all(meta["parts"].values()) and set(signals) <= set(meta["metrics_clean"])
    assert json.loads((tmp_path / "kmnc" / "summary.json").read_text())["table"] == str(table.resolve())

    one_pass = compute_groundtruth(small_benchmark(levels=2, test_per_class=5), tmp_path / "one", progress=False)
    assert [r["parts"] for r in read_meta(one_pass)["runs"]] == [["objectives", "signals"]]
    assert table.read_bytes() == one_pass.read_bytes()
