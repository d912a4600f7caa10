"""The Hydra app end to end, as a user runs it: real files, exit codes, stdout and stderr.

One run starts `python run.py` as a subprocess, as a user does; the others run the same script in
this process (tests/helpers/cli_helpers.py), which checks the same things without a fresh interpreter per call."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from testnav.core.intervals import half_width
from tests.helpers.cli_helpers import run_inprocess as run
from tests.helpers.cli_helpers import run_subprocess

SMALL = ["benchmark.levels=3", "benchmark.test_per_class=20", "search.pop_size=20", "budget=300", "progress=false"]
SUMMARY_KEYS = {
    "benchmark",
    "fidelity",
    "search",
    "seed",
    "budget",
    "proposals",
    "unique",
    "pstar_size",
    "auc_recall",
    "final_recall",
    "unique_to_full_recall",
    "budget_to_full_recall",
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("work")


def test_single_run_writes_contract_outputs(workdir, cache_dir):
    out = workdir / "run1"
    r = run_subprocess([*SMALL, f"cache_dir={cache_dir}", f"hydra.run.dir={out}", "fidelity=kid"], workdir)
    assert r.returncode == 0, r.stderr
    assert "|P*| =" in r.stdout and "AUC-Recall@P* =" in r.stdout
    s = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= set(s)
    assert (s["benchmark"], s["fidelity"], s["search"], s["seed"], s["budget"]) == ("mnist5k", "kid", "nsga2", 0, 300)
    assert s["epsilon"] == 0.01 and "epsilon_setting" not in s  # a replay keeps the papers' ε
    trace = pd.read_csv(out / "trace.csv")
    # the contract's columns, then the cost-aware addition and the stopping certificate (docs/tomonav.md)
    assert list(trace.columns) == [
        "proposal",
        "t1",
        "t2",
        "t3",
        "t4",
        "new",
        "unique",
        "delta",
        "rho",
        "in_pstar",
        "inferences",
        "p_complete",
        "p_good",
    ]
    assert trace.inferences.is_monotonic_increasing and trace.inferences.iloc[-1] == s["inferences"]
    assert s["inference_unit"] == "inputs (early stopping)" and 0 < s["auc_recall_inferences"] < 1
    assert trace.proposal.tolist() == list(range(1, 301)) and s["proposals"] == 300
    assert trace.unique.iloc[-1] == s["unique"] == trace.new.sum()
    assert trace[trace.new & trace.in_pstar].shape[0] == round(s["final_recall"] * s["pstar_size"])
    # determinism: same config and seed, same trace and summary, computed again (not the reused run) in process
    out2 = workdir / "run1b"
    r2 = run([*SMALL, f"cache_dir={cache_dir}", f"hydra.run.dir={out2}", "fidelity=kid", "reuse_runs=false"], workdir)
    assert r2.returncode == 0, r2.stderr
    # in process, the same printed summary as the subprocess's
    assert r2.stdout[r2.stdout.index("TestNav · ") :] == r.stdout[r.stdout.index("TestNav · ") :].replace(
        str(out), str(out2)
    )
    pd.testing.assert_frame_equal(trace, pd.read_csv(out2 / "trace.csv"))
    s2 = json.loads((out2 / "summary.json").read_text())
    timings = {"search_seconds", "certificate_seconds"}  # wall-clock fields, the only ones allowed to differ
    assert {k: v for k, v in s2.items() if k not in timings} == {k: v for k, v in s.items() if k not in timings}
    # and the same report.html, byte for byte (what it shows is tested in tests/e2e/test_what_breaks.py)
    assert (out / "report.html").read_bytes() == (out2 / "report.html").read_bytes()


@pytest.mark.slow  # its own 4⁴ ground truth and four runs: make test-all
def test_multirun_sweep_with_basic_launcher(workdir, cache_dir):
    sweep = workdir / "sweep"
    # report.html is tested in tests/e2e/test_what_breaks.py; four of them here would only cost time
    args = ["benchmark.levels=4", "benchmark.test_per_class=20", "budget=300", "progress=false", "report.write=false"]
    r = run(
        ["-m", *args, f"cache_dir={cache_dir}", "search=nsga2,random", "seed=range(2)", f"hydra.sweep.dir={sweep}"],
        workdir,
    )
    assert r.returncode == 0, r.stderr
    summaries = [json.loads(p.read_text()) for p in sweep.glob("*/summary.json")]
    assert sorted((s["search"], s["seed"]) for s in summaries) == [
        ("nsga2", 0),
        ("nsga2", 1),
        ("random", 0),
        ("random", 1),
    ]
    assert len({s["pstar_size"] for s in summaries}) == 1


def test_replay_on_external_csv_table(workdir):
    rng = np.random.default_rng(0)
    t = np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3)
    df = pd.DataFrame(t, columns=["t1", "t2", "t3"]).assign(
        delta=t.sum(1) + rng.random(64), rho=-t.sum(1) + rng.random(64)
    )
    path = workdir / "ext.csv"
    df.to_csv(path, index=False)
    out = workdir / "ext_run"
    r = run([f"groundtruth.table={path}", "search=random", "seed=3", "budget=64", f"hydra.run.dir={out}"], workdir)
    assert r.returncode == 0, r.stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["benchmark"] == "ext" and s["space_size"] == 64 and s["unique"] == 64 and s["final_recall"] == 1.0
    # no per-input outcomes: every configuration costs |D|, counted as 1, so the two AUCs agree
    assert s["inferences"] == 64 and "no per-input outcomes" in s["inference_unit"]
    assert s["auc_recall_inferences"] == pytest.approx(s["auc_recall"])
    assert list(pd.read_csv(out / "trace.csv").columns[1:4]) == ["t1", "t2", "t3"]


def bad_tables(tmp):
    lat = np.stack(np.meshgrid(*[np.arange(3)] * 2, indexing="ij"), -1).reshape(-1, 2)
    good = pd.DataFrame(lat, columns=["t1", "t2"]).assign(delta=np.arange(9.0), rho=-np.arange(9.0))
    cases = {
        "good": good,
        "missing_row": good.drop(index=3),
        "duplicate": pd.concat([good, good.iloc[[0]]]),
        "nan": good.assign(rho=good.rho.where(good.index != 5, np.nan)),
        "no_rho": good.drop(columns="rho"),
        "inf": good.assign(delta=good.delta.where(good.index != 2, np.inf)),
        "renamed": good.rename(columns={"t1": "level1", "t2": "level2"}),
    }
    paths = {}
    for name, df in cases.items():
        paths[name] = tmp / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths


# (overrides, what the one-line error must say); "table:X" replays on bad_tables()[X]
BAD_INPUTS = [
    (
        ["benchmark=mnist6k"],
        "unknown benchmark 'mnist6k' (valid: cifar10, gtsrb, humaneval, image_classification, mbpp, mnist, "
        "mnist5k, mnist5k_c6, qqp, roboflow, text_classification, tiny_imagenet)",
    ),
    (["seed=abc"], "seed=abc: must be a whole number"),
    (["fidelity=lpips"], "unknown fidelity 'lpips' (valid: bertf1, chrf, kid, ssim)"),
    (
        ["-m", "search=nsga2,nsga3"],
        "unknown search 'nsga3' (valid: deepgini, delta_only, dsa, ga, greedy, kmnc, lsa, nac, nsga2",
    ),
    (["search.eta_c=0"], "search.eta_c=0.0: the distribution index must be > 0"),
    (["search=nac", "table:good"], "no column nac for the chosen search"),
    (
        ["stage=live", "search.engine=fast", "benchmark.levels=3", "search.pop_size=10"],
        "a live search needs search.engine=pymoo",
    ),
    (["experiment=testnav_grid", "grid.engine=gpu"], "grid.engine=gpu (valid: fast, pymoo)"),
    (["seeed=3"], "unknown config key 'seeed'"),
    (["-m", "search=nsga2,random", "search.pop_size=20"], "unknown config key 'search.pop_size' with search=random"),
    (["budget=0"], "budget=0: must be a positive whole number"),
    (["budget=-5"], "budget=-5: must be a positive whole number"),
    (["benchmark.levels=7"], "benchmark.levels=7 is outside family brightness's table (valid: 2..6"),
    (
        ["stage=train"],
        "stage=train (valid: search, groundtruth, live, compare, grid, tomography, query, study, check, scan)",
    ),
    (["table:missing_row"], "1 of 9 configurations missing"),
    (["table:duplicate"], "θ=(0, 0) appears 2 times"),
    (["table:nan"], "column rho has a non-finite value (nan)"),
    (["table:no_rho"], "missing column(s) rho"),
    (["groundtruth.table=/nonexistent.csv"], "no such file"),
    (["table:inf"], "column delta has a non-finite value (inf)"),
    (["table:renamed"], "level columns none found; need t1..tn"),
    (["benchmark.levels=3", "search.pop_size=100"], "search.pop_size=100 exceeds |Θ|=81"),
    (
        ["stage=query", "query='brightness >='"],
        "query error at 13: expected a number after brightness >=, found the end",
    ),
    (["stage=query", "query='blurr >= 3'"], "query error at 0: unknown family 'blurr'"),
    (["stage=query"], "stage=query needs query="),
    (["stage=groundtruth", "benchmark.test_per_class=0"], "benchmark.test_per_class=0: must be ≥ 1"),
    (["stage=groundtruth", "benchmark.test_per_class=600"], "benchmark.test_per_class=600: must be < "),
    (
        ["-m", "hydra/launcher=slurm"],
        "unknown hydra/launcher 'slurm' (valid: basic, local, slurm_cpu, slurm_gpu, submitit_local, submitit_slurm)",
    ),
    (
        ["-m", "experiment=groundtruth_shards", "groundtruth.shards=2", "groundtruth.shard=range(3)"],
        "groundtruth.shard=2 with groundtruth.shards=2 (valid: 0..1)",
    ),
    (
        ["stage=groundtruth", "groundtruth.shards=40", "benchmark.levels=6"],
        "groundtruth.shards=40: must be a whole number from 1 to 36",
    ),
]


@pytest.mark.parametrize("case, expect", BAD_INPUTS)
def test_bad_input_one_line_nonzero_nothing_left(case, expect, workdir, cache_dir, tmp_path):
    args = [f"groundtruth.table={bad_tables(tmp_path)[a[6:]]}" if a.startswith("table:") else a for a in case]
    results = tmp_path / "results"
    size = [] if any(a.startswith("benchmark.test_per_class") for a in args) else ["benchmark.test_per_class=20"]
    # progress=false: a case that computes the ground truth before failing (pop_size against |Θ|) would print
    # its progress bar on stderr whenever the session's cache is cold (the test alone, or on an xdist worker)
    r = run(
        [
            *args,
            f"cache_dir={cache_dir}",
            f"hydra.run.dir={results}/run",
            f"hydra.sweep.dir={results}/sweep",
            *size,
            "progress=false",
        ],
        tmp_path,
    )
    assert r.returncode != 0
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert expect in lines[0]
    assert not (results / "run").exists() and not any(results.glob("sweep/*/summary.json"))


def test_live_search_evaluates_the_model_and_agrees_with_groundtruth(workdir, cache_dir):
    out = workdir / "live"
    r = run(
        [
            "stage=live",
            "benchmark.levels=3",
            "benchmark.test_per_class=20",
            "budget=60",
            "search.pop_size=10",
            "progress=false",
            "report.write=false",  # the live report: tests/e2e/test_what_breaks.py
            f"cache_dir={workdir / 'live-cache'}",  # its own: nothing measured before (testnav/groundtruth/store.py)
            f"hydra.run.dir={out}",
        ],
        workdir,
    )
    assert r.returncode == 0, r.stderr
    assert "ranked list R" in r.stdout and not (out / "report.html").exists()
    s = json.loads((out / "summary.json").read_text())
    assert s["live"] and s["evaluations"] == s["unique"] and s["reused"] == 0
    assert s["proposals"] == 60 and s["auc_recall"] is None
    assert s["inferences"] == s["evaluations"] * 200 and s["inference_unit"].startswith("inputs (full D")
    # stage=live's ε is the measurement's resolution on its 200 inputs (conf/settings/certificate.yaml): δ's,
    # the paired difference of the clean and a perturbed accuracy, and ρ's, SSIM's per-image standard error
    assert (s["epsilon_setting"], s["epsilon_inputs"]) == ("auto", 200) and s["epsilon"] == s["resolution_delta"]
    assert 0 < s["epsilon"] < 2 * half_width(200) and s["resolution_rho_method"] == "per-input"
    assert s["epsilon_delta"] == s["epsilon"] and s["epsilon_rho"] == s["resolution_rho"] > 0 and s["certifiable"]
    assert "Certificate" in r.stdout and "at N = 200" in r.stdout
    assert re.search(
        rf"^  front: \d+ members, \d+ told apart at the resolution \(± {s['epsilon']:.3f} of accuracy on 200 inputs\)",
        r.stdout,
        re.M,
    )
    ranked = pd.read_csv(out / "ranked.csv")
    assert len(ranked) == s["unique"] and ranked["rank"].is_monotonic_increasing
    # the live oracle computes exactly what the ground-truth pass stores
    small = ["benchmark.levels=3", "benchmark.test_per_class=20", f"cache_dir={cache_dir}", "progress=false"]
    r = run(["stage=groundtruth", *small], workdir)
    gt = re.search(r"^ground truth mnist5k: (\S+\.parquet)", r.stdout, re.M).group(1)  # not the log line of a compute
    table = pd.read_parquet(gt).set_index(["t1", "t2", "t3", "t4"])
    assert len(table) == 81
    for _, row in ranked.iterrows():
        ref = table.loc[(row.t1, row.t2, row.t3, row.t4)]
        assert row.delta == pytest.approx(ref.delta) and row.rho == pytest.approx(ref.ssim)


def test_the_live_oracle_scores_only_its_rho_and_what_a_search_asks_for(tmp_path):
    """A live search scores ψ and its ρ's metric, not every column of a table (no float64 pass for the
    coverage signals); a search that reads a signal gets it, the entries scored before are scored again
    with it, and each value equals a full scoring's; an unknown signal is one line."""
    from testnav import pipeline
    from testnav.errors import UserError

    bench = pipeline.compose_benchmark(["benchmark.levels=2", "benchmark.test_per_class=10"])
    session = pipeline.open(bench, tmp_path, "cpu")
    oracle = pipeline.live_oracle(session, "ssim")
    oracle.evaluate([3, 5])
    assert set(oracle.memo[3]) == {"ssim", "delta", "rho"} and oracle.evaluations == 2
    values = oracle.evaluate([3, 7], names=("delta", "rho", "kmnc"))
    assert set(oracle.memo[3]) == set(oracle.memo[7]) == {"ssim", "kmnc", "delta", "rho"}
    assert set(oracle.memo[5]) == {"ssim", "delta", "rho"} and oracle.evaluations == 3
    theta = tuple(int(v) for v in bench.lattice.theta(7))
    full = bench.score_sets(session.loaded, [session.walker.images(theta)], [theta])[0]
    assert values[1, 2] == full["kmnc"] and values[1, 0] == max(oracle.psi_clean - full["psi"], 0.0)
    assert set(bench.metrics) >= {"ssim", "kid"} and "nac" in bench.signals  # restored after scoring
    with pytest.raises(UserError, match="computes no signal 'psnr'"):
        oracle.evaluate([3], names=("delta", "psnr"))
