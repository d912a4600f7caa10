"""A ground-truth run killed (SIGKILL) at several points and resumed writes the same table,
byte for byte, as an uninterrupted run; finished chunks are not redone."""

import os
import signal
import subprocess
import sys
import time

from tests.conftest import ROOT

ARGS = ["stage=groundtruth", "benchmark.levels=3", "benchmark.test_per_class=20", "progress=false"]


def start(cache, run_dir):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, str(ROOT / "run.py"), *ARGS, f"cache_dir={cache}",
                             f"hydra.run.dir={run_dir}"], cwd=run_dir.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def parts(cache):
    return sorted(p.name for p in (cache / "groundtruth").glob("*.parts/chunk-*.parquet"))


def test_sigkill_then_resume_gives_an_identical_table(tmp_path, cache_dir):
    ref = tmp_path / "ref"
    assert start(ref, tmp_path / "r0").wait(timeout=600) == 0
    reference = next((ref / "groundtruth").glob("mnist5k-*.parquet"))

    cache = tmp_path / "killed"
    (cache / "models").mkdir(parents=True)
    for f in (ref / "models").iterdir():  # the same trained LeNet-5: only the ground truth is under test
        (cache / "models" / f.name).write_bytes(f.read_bytes())
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
    one computes it, the others wait on the lock and reuse it; all end with the same table."""
    cache = tmp_path / "cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    procs = [subprocess.Popen([sys.executable, str(ROOT / "run.py"), *ARGS, f"cache_dir={cache}",
                               f"hydra.run.dir={tmp_path / f'run{i}'}"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(3)]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    computed = [o for o in outputs if "configurations in" in o]  # logged only by the process that computed
    trained = [o for o in outputs if "training LeNet-5" in o]
    assert len(computed) == 1 and len(trained) == 1, outputs
    tables = {line.split("ground truth mnist5k: ")[1].split()[0] for o in outputs for line in o.splitlines()
              if line.startswith("ground truth mnist5k: ")}
    assert len(tables) == 1 and len(list((cache / "groundtruth").glob("mnist5k-*.parquet"))) == 1
