"""scripts/scale_study.py end to end on a tiny lattice: a row per run, the report's sections, runs
appended across invocations, the hand-written preamble kept, and the scaling figure drawn."""

from __future__ import annotations

import pandas as pd

from tests.helpers.cli_helpers import load_script


def test_runs_append_and_keep_the_preamble(tmp_path):
    study = load_script("scale_study")
    out = tmp_path / "scale"
    common = ["--sizes", "3x3", "--profiles", "pairs", "--searches", "random", "tomonav", "--out", str(out)]
    assert study.main([*common, "--seeds", "100"]) == 0
    df = pd.read_csv(out.with_suffix(".csv"))
    assert len(df) == 2 and df["ok"].all()
    assert set(df["search"]) == {"random", "tomonav"} and (df["budget"] == 5 * 27).all()  # 5|Θ| at |Θ| ≤ 10⁴
    assert df["auc"].between(0, 1).all() and (df["peak_mb"] > 0).all()
    text = out.with_suffix(".md").read_text()
    for section in ("## What was run", "## Per size, budget and search", "## Stopping at 0.95"):
        assert section in text
    assert "TomoNav's, by lattice" in text and "without settling" in text
    # without the settled front's wider tolerance a run stops at the same checkpoint or later
    former = df.apply(study.unsettled_stop, axis=1)
    assert (former.isna() | (former >= df["stop_unique"])).all()
    # a preamble written by hand survives a second invocation that appends a seed
    title, rest = text.split("\n\n", 1)
    out.with_suffix(".md").write_text(f"{title}\n\n**Split.** held-out seeds only.\n\n{rest}")
    assert study.main([*common, "--seeds", "101"]) == 0
    df = pd.read_csv(out.with_suffix(".csv"))
    assert sorted(df["seed"].unique()) == [100, 101] and len(df) == 4
    text = out.with_suffix(".md").read_text()
    assert text.count("**Split.** held-out seeds only.") == 1
    assert text.index("**Split.**") < text.index("## What was run")
    assert "seeds 100, 101" in text


def test_scale_figure_from_the_study(tmp_path):
    from testnav.figures import scale

    study = load_script("scale_study")
    out = tmp_path / "scale"
    args = ["--profiles", "pairs", "--searches", "random", "--seeds", "100", "--out", str(out)]
    assert study.main(["--sizes", "3x3", "3x4", *args]) == 0
    # a profile run at one size only stays out of the curves (it would bend them at that size)
    assert study.main(["--sizes", "3x3", "--profiles", "additive", *args[2:]]) == 0
    drawn = scale.draw(out.with_suffix(".csv"), tmp_path / "scale.png")
    assert drawn is not None and drawn[0].stat().st_size > 0
    assert "27–64 configurations" in drawn[1]
    assert "1 profile(s): pairs;" in drawn[1]


def test_rerun_repeats_exactly_the_runs_on_record(tmp_path, monkeypatch):
    study = load_script("scale_study")
    out = tmp_path / "scale"
    common = ["--profiles", "pairs", "--searches", "random", "tomonav", "--out", str(out)]
    assert study.main(["--sizes", "3x3", "--seeds", "100", "101", *common]) == 0
    assert study.main(["--sizes", "3x4", "--seeds", "100", "--budgets", "50", *common]) == 0
    before = pd.read_csv(out.with_suffix(".csv"))
    # only the sizes named are rerun, each with the seeds and budgets it has, nothing added;
    # which runs were repeated is read off the calls (a fast run's wall time can repeat to 0.1 ms)
    calls, forked = [], study.forked
    monkeypatch.setattr(
        study, "forked", lambda fn, obj, *a: calls.append((obj.lattice.size, *a)) or forked(fn, obj, *a)
    )
    assert study.main(["--rerun", "--sizes", "3x3", "5x5", *common]) == 0
    after = pd.read_csv(out.with_suffix(".csv"))
    keys = ["lattice", "profile", "seed", "budget", "search"]
    assert len(after) == len(before) == 6
    merged = before.merge(after, on=keys, suffixes=("", "_rerun"))
    assert len(merged) == 6
    for column in ("auc", "unique", "checkpoints"):  # deterministic per table and seed
        assert (merged[column] == merged[f"{column}_rerun"]).all()
    # (size, search, budget, seed, stop_at) of each run repeated: the four 3^3 runs, none at 4^3
    assert sorted(c[:4] for c in calls) == sorted(
        (27, s, 135, seed) for s in ("random", "tomonav") for seed in (100, 101)
    )
