"""The plug-in contracts, checked over everything that plugs in, found rather than listed (as
torchmetrics' MetricTester does): every Search subclass and conf/search file, every fidelity
Metric, the Benchmark base class, and the styles figures draw searches with."""

import importlib
import inspect
import itertools
import pkgutil
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

import testnav.searches
from testnav import fidelity
from testnav.pipeline import build, compose_config
from testnav.benchmarks.base import Benchmark
from testnav.errors import UserError
from testnav.fidelity.base import Metric
from testnav.figures import build as figure_build
from testnav.figures.loader import ABLATIONS, BASELINES, INPUT_LEVEL
from testnav.core.oracle import TableOracle
from testnav.paths import CONF
from testnav.searches import Search, Style
from testnav.searches.registry import presentation
from testnav.groundtruth.synthetic import synthetic_table
from testnav.core.table import Objectives

ROOT = Path(__file__).resolve().parents[1]
SEARCH_FILES = sorted(p.stem for p in (CONF / "search").glob("*.yaml"))


def subclasses(base):
    out, todo = [], [base]
    while todo:
        for c in todo.pop().__subclasses__():
            out.append(c)
            todo.append(c)
    return out


def search_classes():
    for m in pkgutil.iter_modules(testnav.searches.__path__):
        importlib.import_module(f"testnav.searches.{m.name}")
    return [c for c in subclasses(Search) if not inspect.isabstract(c) and c.__module__.startswith("testnav.")]


def built_search(name: str):
    node = OmegaConf.to_container(compose_config([f"search={name}"]).search, resolve=True)
    node.pop("stop_at", None)
    return build(OmegaConf.create(node))


def small_oracle(signals=()):
    df = synthetic_table("pairs", n=3, levels=4, seed=1)
    rng = np.random.default_rng(0)
    for s in signals:
        df[s] = rng.random(len(df))
    return TableOracle(Objectives.from_table(df, "rho", 1.0, signals=signals))


def test_every_search_class_is_configured_and_labelled():
    targets = {OmegaConf.to_container(compose_config([f"search={n}"]).search)["_target_"] for n in SEARCH_FILES}
    for cls in search_classes():
        assert f"{cls.__module__}.{cls.__qualname__}" in targets, f"{cls.__name__} has no conf/search file"
        assert cls.label and isinstance(cls.style, Style), f"{cls.__name__} declares no label or style"


@pytest.mark.parametrize("name", SEARCH_FILES)
def test_every_configured_search_keeps_the_contract(name):
    search = built_search(name)
    assert isinstance(search, Search) and search.name == name
    assert (search.label, search.style) == presentation(name)  # what figures draw is what the search declares
    assert set(search.requires) <= set(search.objectives) and "delta" not in search.requires
    assert search.replay_only is False  # the default settings run live too
    oracle = small_oracle(search.requires)
    lattice = oracle.lattice
    search.fit(lattice, 60)
    search.check(lattice, 60)
    a = search.run(oracle, 60, seed=3)
    b = built_search(name)
    b.fit(lattice, 60)
    assert len(a) <= 60 and a.dtype.kind == "i" and ((0 <= a) & (a < lattice.size)).all()
    assert np.array_equal(a, b.run(small_oracle(search.requires), 60, seed=3)), "not deterministic per seed"


def test_replay_only_search_is_refused_live_in_one_line():
    search = built_search("nsga2")
    search.engine = "fast"
    assert search.replay_only and search.live_fix == "search.engine=pymoo"


def test_app_and_live_do_not_probe_plugins():
    for rel in ("testnav/app/stages.py", "testnav/groundtruth/live.py"):
        text = (ROOT / rel).read_text()
        assert "hasattr(" not in text and "getattr(search" not in text, rel


FIGURE_SEARCHES = {
    "Fig. 2 / Table 2": BASELINES,
    "Fig. 3": ABLATIONS,
    "Fig. 4": INPUT_LEVEL,
    "Fig. 9": inspect.signature(figure_build.certificate_curves).parameters["searches"].default,
}


@pytest.mark.parametrize("figure", FIGURE_SEARCHES)
def test_no_two_searches_drawn_in_one_figure_share_a_style(figure):
    names = FIGURE_SEARCHES[figure]
    for a, b in itertools.combinations(names, 2):
        sa, sb = presentation(a)[1], presentation(b)[1]
        assert (sa.color, sa.ls) != (sb.color, sb.ls), f"{figure}: {a} and {b} are drawn alike"
        assert sa.color != sb.color or figure != "Fig. 9", f"{figure}: {a} and {b} share a colour"
        assert presentation(a)[0] != presentation(b)[0]


def test_a_search_without_a_conf_file_still_gets_a_label_and_style():
    label, style = presentation("my_search")
    assert label == "my_search" and isinstance(style, Style)


def test_every_metric_declares_direction_and_column():
    classes = fidelity.metric_classes()
    assert set(classes) >= {"ssim", "kid", "chrf", "bertf1"}
    for column, cls in classes.items():
        assert isinstance(cls.higher_is_better, bool) and cls.column == column
        assert not inspect.isabstract(cls)
    assert fidelity.sign("kid") == -1.0 and fidelity.sign("ssim") == 1.0 and fidelity.sign("rho") == 1.0
    for p in (CONF / "fidelity").glob("*.yaml"):  # every fidelity= choice names a column some metric writes
        assert OmegaConf.load(p).column in classes, p.name
    with pytest.raises(TypeError, match="higher_is_better"):

        class NoDirection(Metric):  # noqa: F841
            column = "x"


@pytest.mark.parametrize(
    "target,kwargs,pattern",
    [
        ("testnav.fidelity.ssim.SSIM", {"sigma": 0}, r"metric ssim: sigma=0 \("),
        ("testnav.fidelity.ssim.SSIM", {"data_range": -1}, r"data_range=-1"),
        ("testnav.fidelity.kid.KID", {"subset_size": 0}, r"metric kid: subset_size=0"),
        ("testnav.fidelity.chrf.ChrF", {"char_order": 0}, r"metric chrf: char_order=0"),
    ],
)
def test_metric_arguments_are_checked_when_built(target, kwargs, pattern):
    with pytest.raises(UserError, match=pattern) as e:
        build(OmegaConf.create({"_target_": target, **kwargs}))
    assert "\n" not in str(e.value)


def test_benchmark_contract_is_abstract_and_met():
    assert inspect.isabstract(Benchmark)
    assert {"load", "prepare_metrics", "score", "data_description"} <= Benchmark.__abstractmethods__
    bench = build(compose_config(["benchmark=mnist5k"]).benchmark)
    assert isinstance(bench, Benchmark) and not inspect.isabstract(type(bench))
    assert all(isinstance(m, Metric) for m in bench.metrics.values())


def test_a_new_search_appears_in_the_all_methods_table(tmp_path):
    import pandas as pd

    from testnav.figures.tables import write_table2

    runs = pd.DataFrame(
        [
            {"search": s, "benchmark": "b", "fidelity": "ssim", "seed": seed, "auc_recall": 0.5 + 0.1 * seed}
            for s in ("nsga2", "my_search")
            for seed in (0, 1)
        ]
    )
    write_table2(runs, tmp_path)
    table = pd.read_csv(tmp_path / "table2_all.csv")
    assert list(table["method"]) == ["TestNav", "my_search"]
    assert "my_search" not in pd.read_csv(tmp_path / "table2.csv")["method"].tolist()  # the paper's table stays its own
