"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/groundtruth/test_shards.py (the unit tier drives no CLI)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from testnav.groundtruth.compute import CHUNK_PREFIX, read_meta
from tests.conftest import ROOT
from tests.unit.groundtruth.test_shards import ARGS, reference  # noqa: F401


def run_py(cache, run_dir, *extra):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), *ARGS, *extra, f"cache_dir={cache}", f"hydra.run.dir={run_dir}"],
        cwd=run_dir.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow  # a run.py process killed mid-shard and restarted: make test-all
def test_a_killed_shard_resumes_from_its_chunks(reference, cache_dir, tmp_path):
    """What a preempted or requeued SLURM job does: rerun from the start, find its chunks on disk."""
    cache = tmp_path / "killed"
    parts_dir = cache / "groundtruth" / reference.with_suffix(".parts").name
    shard0 = ["groundtruth.shards=2", "groundtruth.shard=0"]  # chunks (0,0) (0,1) (0,2) (1,0)
    proc = run_py(cache, tmp_path / "r1", *shard0)

    def whole_chunks() -> set[str]:  # a chunk is done when every part of it is on disk (here both)
        return set.intersection(
            *(
                {p.name.removeprefix(f"{pre}-") for p in parts_dir.glob(f"{pre}-*.parquet")}
                for pre in CHUNK_PREFIX.values()
            )
        )

    deadline = time.time() + 300
    while len(whole_chunks()) < 2 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = whole_chunks()  # the kill may also fall between a chunk's two parts
    before = {p.name: p.stat().st_mtime_ns for p in parts_dir.glob("*.parquet")}
    assert 2 <= len(done) < 4, "killed mid-shard"
    out = run_py(cache, tmp_path / "r2", *shard0).communicate(timeout=600)[0]
    assert "shard 0 of 2 written" in out, out
    assert len(whole_chunks()) == 4  # the shard's four chunks, no more
    assert all(os.stat(parts_dir / n).st_mtime_ns == t for n, t in before.items())  # no part redone
    proc = run_py(cache, tmp_path / "r3", "groundtruth.shards=2", "groundtruth.shard=1")
    out = proc.communicate(timeout=600)[0]
    assert proc.returncode == 0 and "family applications" in out, out
    merged = cache / "groundtruth" / reference.name
    assert merged.read_bytes() == reference.read_bytes()
    runs = [r for r in read_meta(merged)["runs"] if r["shard"] == 0]
    assert len(runs) == 2 and runs[1]["chunks_reused"] == len(done)
    assert runs[1]["chunks_reused"] + runs[1]["chunks_computed"] == 4
