"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/scan/test_scan.py (the unit tier drives no CLI)."""

from __future__ import annotations

import pytest

from tests.helpers.pinned import findings_digest
from tests.unit.scan.test_scan import REPORTED  # noqa: F401


def report_of(kind: str, args, tmp_path, cache_dir, how: str) -> None:
    from tests.e2e.test_what_breaks import SMALL
    from tests.helpers.cli_helpers import run_inprocess as run

    out = tmp_path / kind
    assert run([*args, *SMALL, f"cache_dir={cache_dir}", "budget=20", f"hydra.run.dir={out}"], tmp_path).returncode == 0
    r = run(["report", out], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("What breaks LeNet5? 60 inputs, 4 families × 3 levels (81 configurations)")
    assert how in r.stdout and "findings.report(" not in r.stdout  # no Python in a command-line user's print
    html = (out / "findings.html").read_text()
    assert "What breaks LeNet5?" in html[: html.index('id="modes"')]
    assert (out / "findings" / "findings.json").exists()
    assert findings_digest(out / "findings") == REPORTED[kind]  # as before the verbs moved (issue 73)


def test_testnav_report_writes_the_findings_of_a_finished_live_run(tmp_path, cache_dir):
    """`testnav report RUN_DIR` on a live run: its outcomes, completed by the clean set and each family alone."""
    from tests.helpers.cli_helpers import run_inprocess as run

    report_of("live", ["stage=live", "search.pop_size=10"], tmp_path, cache_dir, "The run measured")
    bad = run(["report", tmp_path], tmp_path)
    assert bad.returncode == 2 and "not a finished run of stage=search or stage=live" in bad.stderr


@pytest.mark.slow
def test_testnav_report_of_a_replayed_run_reads_its_whole_ground_truth(tmp_path, cache_dir):
    report_of("replay", ["search=random"], tmp_path, cache_dir, "Measured all 81 configurations")
