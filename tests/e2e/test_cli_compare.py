"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/pipeline/test_compare.py (the unit tier drives no CLI)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import torch

from testnav.pipeline.record import RunRecord
from tests.helpers.cli_helpers import run_inprocess as run
from tests.unit.pipeline.test_compare import SMALL, compare  # noqa: F401


@pytest.fixture(scope="module")
def live_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    out = tmp / "live"
    r = run(["stage=live", *SMALL, "search=random", "budget=8", f"cache_dir={tmp}/c", f"hydra.run.dir={out}"], tmp)
    assert r.returncode == 0, r.stderr
    return tmp, out


def test_cli_live_keeps_its_record_and_compare_passes_on_the_same_model(live_run):
    tmp, base = live_run
    rec = RunRecord.load(base)
    assert len(rec) >= 2 and rec.inputs == 100 and rec.benchmark == "mnist5k"
    out = tmp / "same"
    # 100 inputs, none flipped: each drop is at most 2.6 points, so within 3 (exit 0) but not within 2 (exit 3)
    r = run(["stage=compare", *SMALL, f"compare.baseline={base}", f"cache_dir={tmp}/c", f"hydra.run.dir={tmp}/u"], tmp)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 3 and len(lines) == 1 and "regression gate undecided" in lines[0], r.stderr
    assert json.loads((tmp / "u" / "comparison.json").read_text())["gate"] == "undecided"
    args = [f"compare.baseline={base}", "compare.max_drop=0.03", f"cache_dir={tmp}/c", f"hydra.run.dir={out}"]
    r = run(["stage=compare", *SMALL, *args], tmp)
    assert r.returncode == 0, r.stderr
    assert "no regression beyond 3.0 points against the baseline" in r.stdout
    summary = json.loads((out / "comparison.json").read_text())
    assert summary["gate"] == "pass" and summary["regressions"] == 0 and summary["configurations_compared"] == len(rec)
    assert (out / "comparison.html").exists() and len(pd.read_csv(out / "comparison.csv")) == len(rec)
    assert len(RunRecord.load(out)) == len(rec)  # this run is the next baseline


def test_cli_compare_exits_1_on_a_regression_with_one_line(live_run):
    from testnav.benchmarks.mnist5k import WEIGHTS

    tmp, base = live_run
    state = torch.load(WEIGHTS / "mnist5k-lenet5.pt")
    last = [k for k in state if k.endswith(("weight", "bias"))][-2:]  # the output layer
    for k in last:
        state[k][[3, 8]] = state[k][[8, 3]]  # 3s and 8s swapped: about 20 points lost everywhere
    torch.save(state, tmp / "damaged.pt")
    out = tmp / "damaged"
    model = [f"benchmark.model.weights={tmp / 'damaged.pt'}", "benchmark.model.sha256=null"]
    r = run(
        ["stage=compare", *SMALL, *model, f"compare.baseline={base}", f"cache_dir={tmp}/c", f"hydra.run.dir={out}"], tmp
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert re.fullmatch(
        r"error: regression beyond 2\.0 points against the baseline: .+: accuracy 0\.\d{3} → 0\.\d{3}, a drop of "
        r"\d+\.\d points, at least \d+\.\d at 95% \(Holm-adjusted p \S+ over \d+ configurations\).*",
        lines[0],
    ), lines[0]
    assert json.loads((out / "comparison.json").read_text())["gate"] == "fail"  # the outputs stay for CI
    html = (out / "comparison.html").read_text(encoding="utf-8")
    assert "Regression gate FAILED" in html and "regression beyond 2.0 points against the baseline" in html


@pytest.mark.parametrize(
    "args, expect",
    [
        (["benchmark.test_per_class=11"], "compare.baseline: measured on other data (100 inputs"),
        (["compare.max_drop=-1"], "compare.max_drop=-1: a share of the accuracy in [0, 1)"),
        (["compare.correction=fdr"], "compare.correction=fdr (valid: holm, bh)"),
        (["compare.measure=maybe"], "compare.measure=maybe (valid: auto, never, all)"),
        (["compare.tolerance=1.5"], "compare.tolerance=1.5: a share of the baseline's configurations in [0, 1)"),
    ],
)
def test_cli_compare_bad_input_is_one_line_and_leaves_nothing(live_run, args, expect):
    tmp, base = live_run
    out = tmp / "bad"
    r = run(
        ["stage=compare", *SMALL, f"compare.baseline={base}", *args, f"cache_dir={tmp}/c", f"hydra.run.dir={out}"], tmp
    )
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and expect in lines[0], r.stderr
    assert not out.exists()


def test_cli_compare_needs_a_baseline(tmp_path):
    r = run(
        ["stage=compare", *SMALL, f"compare.baseline={tmp_path / 'none'}", f"hydra.run.dir={tmp_path / 'o'}"], tmp_path
    )
    assert r.returncode == 2 and "compare.baseline=" in r.stderr and "no such directory" in r.stderr
    r = run(["stage=compare", *SMALL, f"hydra.run.dir={tmp_path / 'o'}"], tmp_path)
    assert r.returncode == 2 and "stage=compare needs compare.baseline=RUN_DIR" in r.stderr
