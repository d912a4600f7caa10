"""summarize.py and the figures read runs with one scanner: a memoised copy of a run counts once."""

import json

from scripts.summarize import main as summarize
from testnav.figures.summaries import load_summaries


def test_memo_copies_count_once(tmp_path, capsys):
    s = {
        "benchmark": "mnist5k",
        "fidelity": "ssim",
        "search": "nsga2",
        "seed": 0,
        "budget": 10,
        "proposals": 10,
        "unique": 9,
        "pstar_size": 3,
        "auc_recall": 0.5,
        "final_recall": 1.0,
        "unique_to_full_recall": 8,
        "budget_to_full_recall": 9,
    }
    for d in (tmp_path / "runs" / "2026-12-01" / "10-00-00_run", tmp_path / "cache" / "runs" / "nsga2-abc"):
        d.mkdir(parents=True)
        (d / "summary.json").write_text(json.dumps(s))
    (tmp_path / "runs" / "2026-12-01" / "11-00-00_run").mkdir()
    (tmp_path / "runs" / "2026-12-01" / "11-00-00_run" / "summary.json").write_text(json.dumps({**s, "seed": 1}))
    assert sorted(load_summaries(tmp_path)["seed"]) == [0, 1]
    assert summarize([str(tmp_path)]) == 0
    assert "(2/2 runs)" in capsys.readouterr().out


def test_the_conformance_table_is_what_the_studies_recorded():
    """results/tables/conformance.md is scripts/conformance.py's reading of the studies' results, and a
    verdict that misses the bar says so (issue 74, item 5)."""
    from tests.helpers.cli_helpers import load_script

    conformance = load_script("conformance")
    text = conformance.render()
    assert text == (conformance.TABLES / "conformance.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert len(rows) == len(conformance.VERDICTS) and all(r.endswith(("| yes |", "| **no** |")) for r in rows)
    assert conformance.wilson(0, 50)[2] > 0.07  # 0 of 50 cannot show 7 %: the bar is on the interval
