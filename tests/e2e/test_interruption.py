"""A ground-truth run killed (SIGKILL) at several points and resumed writes the same table,
byte for byte, as an uninterrupted run; finished chunks are not redone. A killed sweep, run
again, reuses the runs that had finished and produces what an uninterrupted sweep does."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from testnav.groundtruth.compute import compute_groundtruth
from tests.conftest import ROOT, small_benchmark

pytestmark = pytest.mark.slow  # processes killed and restarted, minutes on 2 cores: make test-all
ARGS = ["stage=groundtruth", "benchmark.levels=3", "benchmark.test_per_class=20", "progress=false"]


def start(cache, run_dir):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), *ARGS, f"cache_dir={cache}", f"hydra.run.dir={run_dir}"],
        cwd=run_dir.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def parts(cache):
    return sorted(p.name for p in (cache / "groundtruth").glob("*.parts/chunk-*.parquet"))


def test_sigkill_then_resume_gives_an_identical_table(tmp_path, cache_dir):
    ref = tmp_path / "ref"
    assert start(ref, tmp_path / "r0").wait(timeout=600) == 0
    reference = next((ref / "groundtruth").glob("mnist5k-*.parquet"))

    cache = tmp_path / "killed"
    seen = []
    for k, after in enumerate((1, 4, 7)):  # kill once 1, 4 and 7 of the 9 chunks are on disk
        proc = start(cache, tmp_path / f"r{k + 1}")
        deadline = time.time() + 300
        while len(parts(cache)) < after and proc.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = parts(cache)
        assert not list((cache / "groundtruth").glob("mnist5k-*.parquet")), "killed before the end"
        assert set(seen) <= set(done)  # chunks written before a kill are kept, never rewritten away
        seen = done
    mtimes = {p: p.stat().st_mtime_ns for p in (cache / "groundtruth").glob("*.parts/chunk-*.parquet")}
    assert start(cache, tmp_path / "r9").wait(timeout=600) == 0
    resumed = next((cache / "groundtruth").glob("mnist5k-*.parquet"))
    assert resumed.name == reference.name
    assert resumed.read_bytes() == reference.read_bytes()
    assert len(mtimes) >= 7 and not any(p.exists() for p in mtimes)  # parts merged and removed after success
    assert not list((cache / "groundtruth").glob("*.tmp")) and not list((cache / "groundtruth").glob(".*.tmp"))


def test_concurrent_runs_compute_the_ground_truth_once(tmp_path):
    """Three processes that need the same missing ground truth at once (as a multirun does):
    one computes it, the others wait on the lock and reuse it; all end with the same table. With
    benchmark.model.train=true, so the model's own lock is exercised too: LeNet-5 is trained once."""
    cache = tmp_path / "cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "run.py"),
                *ARGS,
                "benchmark.model.train=true",
                "benchmark.model.epochs=2",
                f"cache_dir={cache}",
                f"hydra.run.dir={tmp_path / f'run{i}'}",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(3)
    ]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    computed = [o for o in outputs if "configurations in" in o]  # logged only by the process that computed
    trained = [o for o in outputs if "training LeNet-5" in o]
    assert len(computed) == 1 and len(trained) == 1, outputs
    tables = {
        line.split("ground truth mnist5k: ")[1].split()[0]
        for o in outputs
        for line in o.splitlines()
        if line.startswith("ground truth mnist5k: ")
    }
    assert len(tables) == 1 and len(list((cache / "groundtruth").glob("mnist5k-*.parquet"))) == 1


def sweep(cache, sweep_dir, *extra):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "run.py"),
            "-m",
            "search=random",
            "seed=range(6)",
            "budget=300",
            "benchmark.levels=3",
            "benchmark.test_per_class=20",
            "progress=false",
            f"cache_dir={cache}",
            f"hydra.sweep.dir={sweep_dir}",
            *extra,
        ],
        cwd=sweep_dir.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def summaries(sweep_dir):
    return {p.parent.name: json.loads(p.read_text()) for p in sweep_dir.glob("*/summary.json")}


def test_a_killed_sweep_rerun_does_not_redo_finished_runs(tmp_path, cache_dir):
    compute_groundtruth(small_benchmark(), cache_dir, progress=False)
    cache = tmp_path / "cache"  # a private copy: the run memo under test starts empty
    shutil.copytree(cache_dir / "groundtruth", cache / "groundtruth")
    first = sweep(cache, tmp_path / "first")
    deadline = time.time() + 300
    while len(summaries(tmp_path / "first")) < 2 and first.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    first.kill()
    first.wait()
    finished = set(summaries(tmp_path / "first"))
    assert 2 <= len(finished) < 6, finished

    again = sweep(cache, tmp_path / "again")
    out = again.communicate(timeout=600)[0]
    assert again.returncode == 0, out
    reused = {
        line.split("run directory: ")[1].split()[0].rsplit("/", 1)[1]
        for block in out.split("TestNav · ")[1:]
        if "reused the finished run" in block
        for line in block.splitlines()
        if "run directory: " in line
    }
    assert finished <= reused and len(reused) < 6, (finished, reused)  # finished runs reused, the rest computed

    fresh = sweep(cache, tmp_path / "fresh", "reuse_runs=false")
    assert fresh.wait(timeout=600) == 0
    strip = lambda d: {
        k: {f: v for f, v in s.items() if f not in ("search_seconds", "certificate_seconds")} for k, s in d.items()
    }
    assert strip(summaries(tmp_path / "again")) == strip(summaries(tmp_path / "fresh"))
    assert len(summaries(tmp_path / "again")) == 6
    for name in summaries(tmp_path / "again"):  # the reused traces are the same bytes a fresh run writes
        assert (tmp_path / "again" / name / "trace.csv").read_bytes() == (
            tmp_path / "fresh" / name / "trace.csv"
        ).read_bytes()
