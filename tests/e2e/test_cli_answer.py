"""The command line answers first (issue 75, item 6): a search run on a benchmark ends with what breaks its
model in the three lines `Tester.scan()` starts with, and `stage=scan` writes findings.html."""

import json

import pytest

from tests.helpers.cli_helpers import run_inprocess as run

SMALL = ["benchmark.levels=3", "benchmark.test_per_class=20", "search.pop_size=20", "budget=100", "progress=false"]


def test_a_search_run_ends_with_the_three_line_answer(tmp_path, cache_dir):
    r = run([*SMALL, f"cache_dir={cache_dir}", f"hydra.run.dir={tmp_path / 'one'}"], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    last = r.stdout.rstrip("\n").splitlines()[-4:]
    assert last[0].startswith("What breaks mnist5k") and "stage=scan" in last[0]
    assert last[1].startswith("  Clean accuracy ") and "Wilson interval" in last[1]
    assert last[2].startswith("  Worst family alone: ") or last[2].startswith("  No family alone")
    assert "interaction" in last[3] or "combination" in last[3]
    assert r.stdout.index("AUC-Recall@P*") < r.stdout.index("What breaks")  # the paper's numbers come first
    quiet = run([*SMALL, f"cache_dir={cache_dir}", "report.answer=false", f"hydra.run.dir={tmp_path / 'q'}"], tmp_path)
    assert quiet.returncode == 0 and "What breaks" not in quiet.stdout


@pytest.mark.slow  # a sweep of two runs: make test-all
def test_a_sweeps_runs_leave_the_answer_out(tmp_path, cache_dir):
    sweep = run(["-m", *SMALL, f"cache_dir={cache_dir}", "seed=0,1", f"hydra.sweep.dir={tmp_path / 'm'}"], tmp_path)
    assert sweep.returncode == 0 and "What breaks" not in sweep.stdout  # report.answer=auto: not per sweep run
    forced = run(
        ["-m", *SMALL, f"cache_dir={cache_dir}", "seed=2", "report.answer=true", f"hydra.sweep.dir={tmp_path / 'f'}"],
        tmp_path,
    )
    assert forced.returncode == 0 and "What breaks mnist5k" in forced.stdout


def test_a_bad_answer_setting_is_one_line(tmp_path, cache_dir):
    r = run([*SMALL, f"cache_dir={cache_dir}", "report.answer=maybe", f"hydra.run.dir={tmp_path / 'bad'}"], tmp_path)
    assert r.returncode == 2 and "report.answer=maybe (valid: auto, true, false)" in r.stderr
    assert not (tmp_path / "bad").exists()


@pytest.mark.slow  # a scan with its report (9 s): make test-all
def test_stage_scan_writes_the_findings_of_the_configured_model(tmp_path, cache_dir):
    out = tmp_path / "scan"
    r = run(["stage=scan", *SMALL, f"cache_dir={cache_dir}", "scan.examples=2", f"hydra.run.dir={out}"], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("What breaks mnist5k? 200 inputs, 4 families × 3 levels (81 configurations)")
    html = (out / "findings.html").read_text()
    assert "Clean accuracy" in html and "<img" in html  # the failure modes' inputs, drawn
    saved = json.loads((out / "findings" / "findings.json").read_text())
    assert saved["clean"]["n"] == 200 and saved["method"]["how"] == "lattice"


@pytest.mark.parametrize("args", [["stage=scan", "scan.examples=-1"], ["stage=scan", "scan.budget_seconds=0"]])
def test_stage_scan_bad_settings_are_one_line(tmp_path, args):
    r = run([*args, "progress=false", f"hydra.run.dir={tmp_path / 'bad'}"], tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "bad").exists()
