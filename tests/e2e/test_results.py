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
