"""The launcher presets against a real SLURM cluster (`make test-slurm` starts one on localhost).

A 2-shard ground truth of the reduced lattice runs as a job array through
`hydra/launcher=slurm_gpu`; while it runs, shard 0 gets submitit's USR2 (what a time limit does)
and shard 1 is requeued by SLURM (what preemption does); both resume from their chunks, and
the merged table must equal one computed here without SLURM. Then a replay sweep runs through
`hydra/launcher=slurm_cpu` and must leave a summary.json per job under results/multirun/.

Opt-in (TESTNAV_SLURM=1), because on a real login node it would submit jobs.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from testnav.groundtruth.compute import compute_groundtruth, read_meta
from tests.conftest import ROOT, small_benchmark

PARTITION = os.environ.get("TESTNAV_SLURM_PARTITION", "local")
SMALL = ["benchmark.levels=3", "benchmark.test_per_class=20", "progress=false", "device=cpu"]
# the local node has 2 CPUs, no GPU and little memory: the presets' keys, overridden
LOCAL = [f"hydra.launcher.partition={PARTITION}", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1"]


def cluster_state() -> str | None:
    """None when an idle SLURM node answers, else why the test cannot run."""
    if os.environ.get("TESTNAV_SLURM") != "1":
        return "SLURM test is opt-in: run `make test-slurm` (starts a local cluster) or set TESTNAV_SLURM=1"
    if shutil.which("sinfo") is None:
        return "no SLURM client on PATH (sinfo): apt-get install slurm-client, or run `make test-slurm`"
    out = subprocess.run(["sinfo", "-h", "-p", PARTITION, "-o", "%T"], capture_output=True, text=True)
    if out.returncode != 0 or not {"idle", "mixed"} & set(out.stdout.split()):
        return f"no idle node in SLURM partition '{PARTITION}' (slurm/local_cluster.sh start): {out.stderr.strip()}"
    return None


reason = cluster_state()
pytestmark = [pytest.mark.slurm, pytest.mark.skipif(reason is not None, reason=reason or "")]


def launch(tmp_path, *overrides):
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), "-m", *overrides],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def array_task(shard: int) -> str | None:
    """The running array task of a shard (the sweep submits shard i as task i)."""
    out = subprocess.run(["squeue", "-h", "-t", "running", "-o", "%i"], capture_output=True, text=True).stdout
    return next((j for j in out.split() if j.endswith(f"_{shard}")), None)


def test_sharded_groundtruth_and_replay_sweep_on_slurm(tmp_path, cache_dir):
    t0 = time.time()
    timings = {}
    reference = compute_groundtruth(small_benchmark(), cache_dir, progress=False)  # here, unsharded
    timings["local reference"] = time.time() - t0
    cache = tmp_path / "results" / "cache"  # where run.py's default cache_dir points from cwd=tmp_path
    parts = cache / "groundtruth" / reference.with_suffix(".parts").name

    t1 = time.time()
    proc = launch(
        tmp_path,
        "hydra/launcher=slurm_gpu",
        *LOCAL,
        "hydra.launcher.gpus_per_node=null",
        "experiment=groundtruth_shards",
        "groundtruth.shards=2",
        "groundtruth.shard=range(2)",
        *SMALL,
    )
    interrupted = {}
    deadline = time.time() + 300
    while proc.poll() is None and time.time() < deadline and len(interrupted) < 2:
        # shard 0 owns chunks (0,0) (0,1) (0,2) (1,0); shard 1 owns (1,1) … (2,2). A requeue is
        # SIGTERM, which submitit ignores, then SIGKILL after KillWait: the shard with more left gets it
        for shard, first, how in (
            (0, "chunk-0-0", ["scancel", "--signal=USR2"]),
            (1, "chunk-1-1", ["scontrol", "requeue"]),
        ):
            if shard not in interrupted and (parts / f"{first}.parquet").exists() and (job := array_task(shard)):
                subprocess.run([*how, job], check=True)
                interrupted[shard] = job
        time.sleep(0.05)
    out = proc.communicate(timeout=600)[0]
    timings["2-shard ground truth on SLURM"] = time.time() - t1
    assert proc.returncode == 0, out
    merged = cache / "groundtruth" / reference.name
    assert merged.read_bytes() == reference.read_bytes()  # same rows, same values, same bytes
    meta = read_meta(merged)
    assert set(interrupted) == {0, 1}, f"a shard finished before it could be interrupted: {meta['runs']}"
    for shard, job in interrupted.items():  # a requeued shard resumed from its chunks, nothing computed twice
        runs = [r for r in meta["runs"] if r["shard"] == shard]
        assert len(runs) >= 2 and runs[-1]["restart"] >= 1 and runs[-1]["chunks_reused"] >= 1, (job, meta["runs"])
        assert runs[-1]["chunks_reused"] + runs[-1]["chunks_computed"] == (4, 5)[shard]

    t2 = time.time()
    proc = launch(
        tmp_path,
        "hydra/launcher=slurm_cpu",
        *LOCAL,
        "search=nsga2,ga",
        "search.pop_size=20",
        "seed=0,1",
        "budget=200",
        *SMALL,
    )
    out = proc.communicate(timeout=600)[0]
    timings["replay sweep (4 jobs) on SLURM"] = time.time() - t2
    assert proc.returncode == 0, out
    summaries = sorted((tmp_path / "results" / "multirun").glob("*/*/mnist5k_ssim_*_s*/summary.json"))
    got = {(s["search"], s["seed"]): s for s in (json.loads(p.read_text()) for p in summaries)}
    assert set(got) == {("nsga2", 0), ("nsga2", 1), ("ga", 0), ("ga", 1)}, summaries
    assert all(s["table"] == str(merged) and s["proposals"] == 200 and s["pstar_size"] > 0 for s in got.values())
    assert all((p.parent / "trace.csv").exists() for p in summaries)
    logs = list((tmp_path / "results" / "multirun").glob("*/*/.submitit/*/*_log.out"))
    assert len(logs) >= 6, logs  # every job went through SLURM (2 shards + 4 replays)
    timings["total"] = time.time() - t0
    print("\nSLURM test timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
