"""The embedded benchmark's ground truth is a fixed point: recomputed here, it matches the
committed golden digests (results/golden/), whatever the thread count or batch size; a nudged
family parameter is caught and named."""

import pandas as pd
import pytest
import torch

from testnav.groundtruth.compute import compute_groundtruth
from testnav.pipeline import golden
from tests.conftest import small_benchmark

REDUCED = golden.GOLDEN_DIR / "mnist5k-reduced"


def table(cache, **overrides):
    return pd.read_parquet(compute_groundtruth(small_benchmark(**overrides), cache, progress=False))


def test_reduced_groundtruth_matches_the_golden(cache_dir):
    assert golden.compare(table(cache_dir), REDUCED) == []


def test_thread_count_and_batch_size_do_not_change_the_table(tmp_path):
    """δ identical and ρ within 1e-6 of the golden (so P* the same) with the other thread count than
    the session's (1 ↔ 2) and a batch size that does not divide |D| = 200; the golden was written
    with 2 threads and batch 1024, and the session's own table (1 thread under xdist) matches it too."""
    before = torch.get_num_threads()
    torch.set_num_threads(1 if before > 1 else 2)
    try:
        df = table(tmp_path, **{"benchmark.batch_size": 37})
    finally:
        torch.set_num_threads(before)
    assert golden.compare(df, REDUCED) == []


def test_a_nudged_family_parameter_is_caught_and_named(tmp_path):
    nudged = table(tmp_path, **{"benchmark.families.0.params": "[0.11,0.2,0.3,0.4,0.5]"})  # brightness level 1
    problems = golden.compare(nudged, REDUCED)
    assert problems and all("θ=(1," in p or p.startswith(("…", "P* under")) for p in problems), problems
    assert any("rho_ssim" in p for p in problems)


def test_compare_reports_each_changed_theta_and_the_front(tmp_path):
    df = pd.read_csv(REDUCED.with_suffix(".csv")).rename(columns={"rho_ssim": "ssim", "rho_kid": "kid"})
    df["kid"] = -df["kid"]  # the golden holds normalised ρ; as raw columns, KID is negated back
    assert golden.compare(df, REDUCED) == []
    df.loc[5, "delta"] += 0.005  # one θ: five more of 1,000 inputs misclassified
    problems = golden.compare(df, REDUCED)
    theta = tuple(int(v) for v in df.loc[5, ["t1", "t2", "t3", "t4"]])
    assert (
        problems[0]
        == f"θ={theta} delta: golden {df.loc[5, 'delta'] - 0.005:.6f}, now {df.loc[5, 'delta']:.6f} (+0.005000)"
    )


@pytest.mark.slow
def test_full_groundtruth_matches_the_golden(cache_dir):
    """The whole 6⁴ lattice on 1,000 digits (minutes on 2 cores): make test-all."""
    assert golden.compare(golden.groundtruth("mnist5k", cache_dir), golden.GOLDEN_DIR / "mnist5k") == []
