"""Figures, tables, the tolerant loader and `make figures` end to end, on small constructed data."""

import json

import numpy as np
import pandas as pd
import pytest

from testnav.core.lattice import Lattice
from testnav.core.table import Objectives
from testnav.core.trace import make_trace, summarize
from testnav.figures.loader import load_results
from testnav.figures.tables import marks, to_latex, to_markdown
from testnav.figures.testnav_plots import plot_examples, plot_pareto, plot_recall, plot_voxels
from tests.helpers.cli_helpers import load_script

PNG = b"\x89PNG\r\n\x1a\n"


def is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG and len(data) > 2000


def tiny_table(levels=3, seed=0) -> pd.DataFrame:
    """A full 4-family lattice with made-up δ and raw SSIM/KID that trade off against each other."""
    lat = Lattice(4, levels)
    rng = np.random.default_rng(seed)
    sev = lat.tuples.sum(1) / (4 * (levels - 1))
    df = pd.DataFrame(lat.tuples, columns=["t1", "t2", "t3", "t4"])
    df["psi"] = 0.9 - 0.6 * sev + rng.normal(0, 0.03, lat.size)
    df["delta"] = (0.9 - df["psi"]).clip(lower=0)
    df["ssim"] = 1 - sev + rng.normal(0, 0.05, lat.size)
    df["kid"] = sev**2 + rng.normal(0, 0.02, lat.size)
    return df


@pytest.fixture(scope="module")
def truth():
    from testnav.figures.loader import truth_from_table

    df = tiny_table()
    return truth_from_table("tiny", "ssim", df, "ssim", 1.0, "tiny.parquet")


def test_pareto_plot_writes_png(tmp_path, truth):
    pts = pd.concat([truth.points.assign(fidelity="ssim"), truth.points.assign(fidelity="kid")])
    out = plot_pareto(pts, tmp_path / "fig1.png", title="tiny")
    assert is_png(out)
    assert truth.pstar["order"].min() >= 1  # θ = 0 is the clean reference, never in P*


def recall_frame():
    rows = []
    for fid in ("ssim", "kid"):
        for s, speed in (("nsga2", 30), ("random", 60), ("greedy", 45), ("ga", 50)):
            for axis, n in (("unique", 81), ("budget", 405)):
                x = np.arange(1, n + 1)
                m = np.minimum(1.0, x / (speed if axis == "unique" else 4 * speed))
                rows.append(
                    pd.DataFrame(
                        {
                            "fidelity": fid,
                            "search": s,
                            "axis": axis,
                            "x": x,
                            "mean": m,
                            "sd": 0.05 * (m < 1),
                            "seeds": 3,
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True)


def test_recall_plot_writes_png_and_is_deterministic(tmp_path):
    c = recall_frame()
    a = plot_recall(c, tmp_path / "a.png", ["nsga2", "greedy", "ga", "random"], title="tiny")
    b = plot_recall(c, tmp_path / "b.png", ["nsga2", "greedy", "ga", "random"], title="tiny")
    assert is_png(a)
    assert a.read_bytes() == b.read_bytes()  # same data, same bytes (no dates or versions in the file)


def test_recall_plot_tolerates_missing_methods(tmp_path):
    c = recall_frame()
    c = c[c["search"] == "nsga2"]
    assert is_png(plot_recall(c, tmp_path / "f3.png", ["nsga2", "delta_only", "rho_only"]))


def test_examples_plot_writes_png(tmp_path, truth):
    rng = np.random.default_rng(0)
    items = [
        {
            "theta": tuple(int(v) for v in r[["t1", "t2", "t3", "t4"]]),
            "order": int(r["order"]),
            "delta": float(r["delta_raw"]),
            "rho": float(r["rho"]),
            "image": rng.random((1, 12, 12)),
        }
        for _, r in truth.pstar.iterrows()
    ]
    items.append({**items[0], "image": rng.random((12, 12, 3))})  # RGB, channels last
    assert is_png(plot_examples(items, tmp_path / "fig5.png", title="tiny"))


def test_voxel_plot_writes_png(tmp_path, truth):
    assert is_png(plot_voxels(truth.pstar, tmp_path / "fig7.png", title="tiny", levels=3))


def test_table2_marks_best_and_second():
    t = pd.DataFrame(
        {
            "A · SSIM": [0.704, 0.557, 0.540, 0.510],
            "A · KID": [0.686, 0.464, 0.552, 0.503],
            # a tie at the shown precision: both best, the next value second
            "B · chrF": [0.7001, 0.7004, 0.690, np.nan],
            "B · one": [np.nan, 0.5, np.nan, np.nan],
        },
        index=["TestNav", "Greedy Search", "Genetic Algorithm", "Random Search"],
    )
    mk = marks(t)
    assert mk["A · SSIM"].tolist() == ["best", "second", "", ""]
    assert mk["A · KID"].tolist() == ["best", "", "second", ""]
    assert mk["B · chrF"].tolist() == ["best", "best", "second", ""]
    assert mk["B · one"].tolist() == ["", "best", "", ""]
    md = to_markdown(t)
    lines = {ln.split("|")[1].strip(): ln for ln in md.splitlines()[2:]}
    assert "**0.704**" in lines["TestNav"] and "**0.686**" in lines["TestNav"]
    assert "<u>0.557</u>" in lines["Greedy Search"] and "<u>0.552</u>" in lines["Genetic Algorithm"]
    assert (
        "0.510" in lines["Random Search"] and "**" not in lines["Random Search"] and "<u>" not in lines["Random Search"]
    )
    assert "–" in lines["Random Search"]  # empty cell, unmarked
    tex = to_latex(t)
    assert r"\textbf{0.704}" in tex and r"\underline{0.557}" in tex and r"\underline{0.552}" in tex
    assert tex.count(r"\textbf{") == 5 and tex.count(r"\underline{") == 3


def write_run(root, rel, obj, search, seed, fidelity="ssim", table="", trace=True, rng_seed=None):
    """One search run directory like Hydra's: a random search's proposals, its trace and summary."""
    rng = np.random.default_rng(rng_seed if rng_seed is not None else seed * 31 + len(search))
    lat = obj.lattice
    proposals = np.concatenate([rng.permutation(lat.size) for _ in range(5)])
    if search == "nsga2":  # make "TestNav" find P* early, so the figures have something to show
        proposals = np.concatenate([obj.pstar, proposals])[: 5 * lat.size]
    values = np.stack([obj.delta[proposals], obj.rho[proposals]], 1)
    tr = make_trace(proposals, lat, values, obj.pstar)
    s = summarize(
        tr,
        lat,
        obj.pstar,
        proposals,
        benchmark="tiny",
        fidelity=fidelity,
        table=table,
        search=search,
        seed=seed,
        budget=5 * lat.size,
    )
    d = root / rel
    d.mkdir(parents=True)
    (d / ".hydra").mkdir()
    (d / ".hydra" / "config.yaml").write_text("stage: search\n")
    (d / "summary.json").write_text(json.dumps(s))
    if trace:
        tr.to_csv(d / "trace.csv", index=False)
    return d


def tiny_results(root, searches=("nsga2", "greedy", "ga", "random"), seeds=(0, 1)):
    """results/ with a cached ground truth and a (partial) multirun sweep over it."""
    gt = root / "cache" / "groundtruth"
    gt.mkdir(parents=True)
    df = tiny_table()
    df.to_parquet(gt / "tiny-0123456789abcdef.parquet", index=False)
    (gt / "tiny-0123456789abcdef.json").write_text(json.dumps({"benchmark": "tiny", "key": "0123456789abcdef"}))
    table = str(gt / "tiny-0123456789abcdef.parquet")
    for fid, sign in (("ssim", 1.0), ("kid", -1.0)):
        obj = Objectives.from_table(df, fid, sign)
        for s in searches:
            for k in seeds:
                write_run(root, f"multirun/2026-01-01/00-00-00/tiny_{fid}_{s}_s{k}", obj, s, k, fid, table)
    return obj, table


def test_loader_tolerates_a_partial_sweep(tmp_path):
    root = tmp_path / "results"
    obj, table = tiny_results(root, searches=("nsga2", "random"), seeds=(0, 1, 2))
    # an interrupted job: Hydra made the directory, no summary was written
    broken = root / "multirun/2026-01-01/00-00-00/tiny_ssim_ga_s0/.hydra"
    broken.mkdir(parents=True)
    (broken / "config.yaml").write_text("stage: search\nseed: 0\n")
    # a run whose trace was deleted, a seed missing, and the same run repeated in runs/
    (root / "multirun/2026-01-01/00-00-00/tiny_kid_random_s2/trace.csv").unlink()
    import shutil

    shutil.rmtree(root / "multirun/2026-01-01/00-00-00/tiny_ssim_random_s1")
    ssim = Objectives.from_table(tiny_table(), "ssim", 1.0)
    write_run(root, "runs/2026-01-02/00-00-00_tiny_ssim_nsga2_s0", ssim, "nsga2", 0, "ssim", table)
    res = load_results(root)
    text = "\n".join(res.missing)
    assert "tiny_ssim_ga_s0 has no summary.json" in text
    assert "tiny/ssim: no runs of greedy, ga, tomonav, delta_only" in text
    assert "tiny/ssim/random: seed(s) 1 missing" in text
    assert "tiny/kid/random seed 2: no trace" in text
    assert "1 repeated run(s)" in text
    assert len(res.runs) == 3 + 2 + 3 + 3  # ssim nsga2 ×3, random ×2; kid nsga2 ×3, random ×3
    c = res.curves
    assert set(c["axis"]) == {"unique", "budget"}
    assert int(c[(c.fidelity == "kid") & (c.search == "random")]["seeds"].iloc[0]) == 2
    u = c[(c.fidelity == "ssim") & (c.search == "nsga2") & (c.axis == "unique")]
    assert len(u) == 81 and u["mean"].iloc[-1] == 1.0
    # recall from the trace equals the summary's AUC (the loader's curve is the paper's curve)
    auc = ((u["mean"].to_numpy()[:-1] + u["mean"].to_numpy()[1:]) / 2).sum() / 81
    runs = res.runs[(res.runs.fidelity == "ssim") & (res.runs.search == "nsga2")]
    assert auc == pytest.approx(runs["auc_recall"].mean())
    assert set(res.truths) == {("tiny", "ssim"), ("tiny", "kid")}
    assert res.truths[("tiny", "kid")].order_counts() == obj.lattice.order_counts(obj.pstar)[1:]  # obj: the kid table


def test_loader_on_missing_or_empty_folder(tmp_path):
    res = load_results(tmp_path / "nothing")
    assert res.runs.empty and res.missing == [f"no results folder {tmp_path / 'nothing'}"]
    (tmp_path / "empty").mkdir()
    res = load_results(tmp_path / "empty")
    assert res.runs.empty and res.curves.empty and res.pairs() == []


def test_figures_script_end_to_end(tmp_path, capsys):
    mod = load_script("figures")
    root = tmp_path / "results"
    tiny_results(root)
    assert mod.main(["--results", str(root), "--no-sweep"]) == 0
    out = capsys.readouterr().out
    assert "drawing only (no sweep)" in out
    figs = root / "figures"
    for name in ("fig1_tiny.png", "fig2_tiny.png", "fig7_tiny_ssim.png", "fig8_tiny_kid.png"):
        assert is_png(figs / name), name
    t2 = (root / "tables" / "table2.md").read_text()
    assert "TestNav" in t2 and "**" in t2
    assert (root / "tables" / "table2.tex").read_text().count(r"\textbf{") >= 2
    assert "(δ, ρ SSIM)" in (root / "tables" / "table3.md").read_text()
    report = (root / "report.md").read_text()
    assert "![Fig. 1 · tiny" in report and "figures/fig2_tiny.png" in report
    assert "Table 2" in report and "What is missing" in report
    assert "conf/benchmark/tiny.yaml" in report  # Figs. 5–6 skipped with the reason, not a crash
    assert not (root / "default_run").exists()  # make run's numbers go only beside a sweep of mnist5k
    first = (figs / "fig2_tiny.png").read_bytes()
    assert mod.main(["--results", str(root), "--no-sweep"]) == 0  # rerun: same bytes
    assert (figs / "fig2_tiny.png").read_bytes() == first


def test_recall_against_inferences_steps_at_what_each_new_configuration_cost():
    from testnav.figures.loader import INFERENCE_POINTS, inference_grid, run_curves

    # three new configurations costing 100, 300, 600 inferences (the second is in P*), then a repeat
    trace = pd.DataFrame(
        {
            "proposal": [1, 2, 3, 4],
            "new": [True, True, True, False],
            "unique": [1, 2, 3, 3],
            "in_pstar": [False, True, True, True],
            "inferences": [100, 400, 1000, 1000],
        }
    )
    c = run_curves(trace, pstar_size=2, space_size=4, budget=4, inferences_space=1000)
    grid = inference_grid(1000)
    assert len(c["inferences"]) == len(grid) == INFERENCE_POINTS and grid[-1] == 1000
    assert c["inferences"][grid < 400].max() == 0.0  # nothing of P* paid for before 400 inferences
    assert (c["inferences"][(grid >= 400) & (grid < 1000)] == 0.5).all() and c["inferences"][-1] == 1.0
    assert "inferences" not in run_curves(trace.drop(columns="inferences"), 2, 4, 4, 1000)
