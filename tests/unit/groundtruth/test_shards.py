"""A ground truth computed as k shards merges into the same table, byte for byte, as one
unsharded run; a shard killed with SIGKILL resumes from its chunks; bad shard values fail early."""

import os
import signal
import subprocess
import sys

import pytest

from testnav.core.lattice import Lattice
from testnav.errors import UserError
from testnav.groundtruth.compute import chunk_prefixes, compute_groundtruth, read_meta
from testnav.groundtruth.shards import check_shards, shard_chunks
from tests.conftest import ROOT, small_benchmark

ARGS = ["stage=groundtruth", "benchmark.levels=3", "benchmark.test_per_class=20", "progress=false"]


@pytest.fixture(scope="module")
def reference(cache_dir):
    """The unsharded table of the reduced lattice (3⁴, 200 digits)."""
    return compute_groundtruth(small_benchmark(), cache_dir, progress=False)


@pytest.mark.parametrize("levels,shards", [(6, 2), (6, 3), (6, 4), (6, 5), (6, 36), (3, 2), (3, 9)])
def test_shards_are_contiguous_balanced_and_cover_every_chunk(levels, shards):
    chunks = chunk_prefixes(Lattice(4, levels))
    parts = [shard_chunks(chunks, shards, s) for s in range(shards)]
    assert [c for p in parts for c in p] == chunks  # contiguous runs, in walk order, nothing twice
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    if levels % shards == 0:  # k divides ℓ: every cut falls between θ1 blocks (no family-1 work repeated)
        assert all(len({c[0] for c in p}) == levels // shards for p in parts)
    cuts_inside = sum(parts[s][-1][0] == parts[s + 1][0][0] for s in range(shards - 1))
    assert cuts_inside <= shards - 1


def test_bad_shard_values_are_one_line_errors():
    for shards, shard in [(0, 0), (37, 0), (2, 2), (2, -1), ("2", 0), (2, 1.5), (True, 0)]:
        with pytest.raises(UserError, match="groundtruth.shard"):
            check_shards(shards, shard, 36)
    assert check_shards(36, 35, 36) == (36, 35)


@pytest.mark.slow  # three shards and a merge of a reduced ground truth (13 s): make test-all
def test_shards_merge_into_the_unsharded_table_and_a_plain_run_fills_the_gap(reference, cache_dir, tmp_path):
    """Three of four shards, then an unsharded run: it reuses their chunks, computes the missing
    shard and merges. (The last shard merging by itself: test_a_killed_shard_resumes_from_its_chunks.)"""
    cache = tmp_path / "k4"
    assert [compute_groundtruth(small_benchmark(), cache, progress=False, shards=4, shard=s) for s in range(3)] == [
        None
    ] * 3
    path = compute_groundtruth(small_benchmark(), cache, progress=False)
    assert path.name == reference.name and path.read_bytes() == reference.read_bytes()
    assert not path.with_suffix(".parts").exists()
    meta = read_meta(path)
    runs = [(r["shard"], r["shards"], r["chunks_reused"], r["chunks_computed"]) for r in meta["runs"]]
    assert runs == [(0, 1, 6, 3), (0, 4, 0, 2), (1, 4, 0, 2), (2, 4, 0, 2)]  # 9 chunks as 2, 2, 2, 3
    assert 80 <= meta["family_applications"] <= 80 + 3  # a cut inside a θ1 block repeats one T1
    # any later run, sharded or not, is served the merged table
    assert compute_groundtruth(small_benchmark(), cache, progress=False, shards=4, shard=3) == path


SIGTERM_A_CHILD = """
import os, signal, subprocess, time
from testnav.app.cli import survive_own_requeue
survive_own_requeue()
child = subprocess.Popen(["sleep", "30"])  # as submitit's `scontrol requeue` is started
time.sleep(0.2)
child.send_signal(signal.SIGTERM)  # what SLURM sends every process of a job it requeues
try:
    print(child.wait(timeout=2))
except subprocess.TimeoutExpired:
    child.kill()
    print("alive")
"""


@pytest.mark.parametrize("executor,outcome", [("slurm", "alive"), ("", str(-signal.SIGTERM))])
def test_in_a_slurm_job_children_outlive_the_requeues_sigterm(executor, outcome):
    """In a submitit SLURM job the process it starts to requeue itself survives the SIGTERM the
    requeue brings (else submitit records the requeue as failed); elsewhere SIGTERM is untouched."""
    env = {**os.environ, "SUBMITIT_EXECUTOR": executor, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", SIGTERM_A_CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [outcome]
