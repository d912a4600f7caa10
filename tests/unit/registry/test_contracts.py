"""The plug-in contracts, checked over everything the registries list (as torchmetrics'
MetricTester does), with the harnesses of tests/helpers/contracts.py: every search of conf/search,
every fidelity metric of conf/fidelity, every signal of conf/signals, every family of every
conf/families table; the YAML as the one place each one's defaults are written; every experiment
preset composing; the Benchmark base class; and the styles figures draw searches with."""

import dataclasses
import importlib
import inspect
import itertools
import pkgutil
from pathlib import Path

import numpy as np
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.utils import get_class
from omegaconf import OmegaConf

import testnav.searches
from testnav import families, fidelity, pipeline, searches, signals
from testnav.benchmarks.base import Benchmark
from testnav.core.early_stopping import Stopping
from testnav.errors import UserError
from testnav.fidelity.base import Metric
from testnav.figures import build as figure_build
from testnav.figures.loader import ABLATIONS, BASELINES, INPUT_LEVEL
from testnav.paths import CONF
from testnav.pipeline import compose_config
from testnav.registry import instantiate, isolated_hydra
from testnav.searches import Search, Style
from testnav.searches.tomonav import TomoNavConfig
from testnav.signals import Signal
from testnav.stopping.certificate import CertificateConfig
from testnav.tomography.core import Settings
from tests.helpers.contracts import (
    check_defaults_written_once,
    check_family,
    check_search,
    settings_written_twice,
    unplaced_carriers,
)

ROOT = Path(__file__).resolve().parents[3]


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


# ------------------------------------------------------------------------------------------ searches


def test_every_search_class_has_a_yaml():
    targets = {searches.REGISTRY.info(n)["_target_"] for n in searches.names()}
    for cls in search_classes():
        assert f"{cls.__module__}.{cls.__qualname__}" in targets, f"{cls.__name__} has no conf/search file"


@pytest.mark.parametrize("name", searches.names())
def test_every_search_keeps_the_contract(name):
    check_search(searches.make, searches.info, name)


@pytest.mark.parametrize("name", searches.names())
def test_every_search_takes_its_defaults_from_its_yaml_and_declares_where_it_is_drawn(name):
    node = searches.REGISTRY.info(name)
    check_defaults_written_once(searches.REGISTRY, name)
    assert node.get("label") and node.get("style"), f"conf/search/{name}.yaml declares no label or style"
    assert set(node.get("groups", ())) <= set(searches.GROUPS)
    assert "stop_at" not in node, "the certificate's settings live under certificate:, not in a search"


def test_make_refuses_an_unknown_search_or_setting_in_one_line():
    with pytest.raises(UserError, match=r"unknown search 'nsga3' \(valid: .*nsga2"):
        searches.make("nsga3")
    with pytest.raises(UserError, match=r"search nsga2 has no setting 'popsize' \(valid: .*pop_size"):
        searches.make("nsga2", popsize=10)
    assert searches.make("nsga2", pop_size=12, engine="fast").pop_size == 12


def test_replay_only_search_is_refused_live_in_one_line():
    search = searches.make("nsga2", engine="fast")
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
        sa, sb = searches.info(a).style, searches.info(b).style
        assert (sa.color, sa.ls) != (sb.color, sb.ls), f"{figure}: {a} and {b} are drawn alike"
        assert sa.color != sb.color or figure != "Fig. 9", f"{figure}: {a} and {b} share a colour"
        assert searches.info(a).label != searches.info(b).label


def test_a_search_without_a_conf_file_still_gets_a_label_and_style():
    shown = searches.info("my_search")
    assert shown.label == "my_search" and isinstance(shown.style, Style) and shown.groups == ()


# ------------------------------------------------------------------------------------------ metrics


@pytest.mark.parametrize("name", fidelity.names())
def test_every_metric_declares_direction_column_label_and_modality(name):
    node = fidelity.REGISTRY.info(name)
    cls = get_class(node["_target_"])
    assert issubclass(cls, Metric) and not inspect.isabstract(cls)
    assert isinstance(cls.higher_is_better, bool) and cls.column == name == node["name"]
    assert fidelity.sign(name) == (1.0 if cls.higher_is_better else -1.0)
    shown = fidelity.info(name)
    assert shown.label and np.isfinite(shown.order) and shown.modalities
    assert set(shown.modalities) <= {"image", "text"}, "a modality no benchmark has"
    check_defaults_written_once(fidelity.REGISTRY, name)
    assert fidelity.make(name).name == name


def test_metric_direction_is_declared():
    assert fidelity.sign("kid") == -1.0 and fidelity.sign("ssim") == 1.0 and fidelity.sign("rho") == 1.0
    with pytest.raises(TypeError, match="higher_is_better"):

        class NoDirection(Metric):  # noqa: F841
            column = "x"


@pytest.mark.parametrize(
    "name,kwargs,pattern",
    [
        ("ssim", {"sigma": 0}, r"metric ssim: sigma=0 \("),
        ("ssim", {"data_range": -1}, r"data_range=-1"),
        ("kid", {"subset_size": 0}, r"metric kid: subset_size=0"),
        ("chrf", {"char_order": 0}, r"metric chrf: char_order=0"),
    ],
)
def test_metric_arguments_are_checked_when_built(name, kwargs, pattern):
    with pytest.raises(UserError, match=pattern) as e:
        fidelity.make(name, **kwargs)
    assert "\n" not in str(e.value)


def test_one_modality_name_for_benchmarks_metrics_and_families():
    """A benchmark's `modality` is the word its metrics (conf/fidelity `modalities`) and the
    families (`families.names(modality=…)`) use: "image", not "vision" in one place and "image" in another."""
    for preset in ("mnist5k", "text_classification"):
        modality = get_class(compose_config([f"benchmark={preset}"]).benchmark._target_).modality
        assert fidelity.names(modality), f"{preset}: no metric of modality {modality!r}"
        assert families.names(modality=modality), f"{preset}: no family of modality {modality!r}"
    used = {m for n in fidelity.names() for m in fidelity.info(n).modalities}
    assert used <= {"image", "text", "code"}, used


def test_a_benchmark_computes_every_metric_of_its_modality_with_its_own_settings():
    bench = instantiate(compose_config(["benchmark=mnist5k"]).benchmark)
    assert list(bench.metrics) == fidelity.names("image")
    paper = instantiate(compose_config(["benchmark=cifar10"]).benchmark)
    assert paper.metrics["kid"].describe() != bench.metrics["kid"].describe()  # its subsets: 100
    only = instantiate(compose_config(["benchmark=text_classification"]).benchmark)
    assert list(only.metrics) == [n for n in fidelity.names("text") if n != "bertf1"]  # bertf1: null


# ------------------------------------------------------------------------------------------ signals


@pytest.mark.parametrize("name", signals.names())
def test_every_signal_is_built_by_name_with_its_yaml_defaults(name):
    check_defaults_written_once(signals._registry(), name)
    assert isinstance(signals.make(name), Signal)
    assert name in searches.names(), f"signal {name} has no input-level search (conf/search/{name}.yaml)"


# ------------------------------------------------------------------------------------------ families

IMAGE_SIDE = {"mnist_c": (1, 28)}  # grayscale digits; other image tables by the size in their name, else 64


def image_batch(table: str) -> torch.Tensor:
    digits = "".join(c for c in table.rsplit("_", 1)[-1] if c.isdigit())
    channels, side = IMAGE_SIDE.get(table, (3, min(int(digits), 64) if digits else 64))
    g = torch.Generator().manual_seed(0)
    x = torch.rand(4, channels, side, side, generator=g) * 0.6 + 0.2
    x[:, :, side // 4 : side // 2, side // 4 : side // 2] = 0.95  # an edge for the geometric families to move
    return x


FAMILY_CASES = [(t, n) for t in families.tables() for n in families.table_nodes(t)]


@pytest.mark.parametrize("table,name", FAMILY_CASES, ids=[f"{t}-{n}" for t, n in FAMILY_CASES])
def test_every_family_of_every_table_keeps_the_contract(table, name):
    family = families.make(name, table=table)
    assert family.name == name and family.max_level >= 2
    if table in ("text", "code"):
        return  # text and code families: tests/unit/families/test_text.py, on sentences and prompts
    check_family(family, image_batch(table), family.max_level)


def test_make_finds_a_family_by_name_for_the_data():
    assert (
        families.make("brightness", image_size=28, channels=1).params
        == families.make("brightness", table="mnist_c").params
    )
    assert families.make("typo", modality="text").name == "typo"
    with pytest.raises(UserError, match=r"unknown family 'blurr' for image data \(valid: brightness"):
        families.make("blurr")


# ------------------------------------------------------------------------------------------ settings


def test_certificate_tomography_and_early_stopping_defaults_are_read_from_the_yamls():
    """conf/settings/*.yaml is the one place these defaults are written: the dataclasses read them at
    import (composed here by Hydra, independently of that read)."""
    cfg = compose_config()
    assert CertificateConfig.from_node(cfg.certificate) == CertificateConfig()
    # epsilon's YAML default depends on the stage: auto live, 0.01 on every other (CertificateConfig's)
    live = compose_config(["stage=live"]).certificate
    assert CertificateConfig.from_node(live) == CertificateConfig(epsilon="auto")
    assert CertificateConfig().epsilon == 0.01
    assert Settings.from_config(cfg) == Settings()
    assert Settings().rule == Stopping.from_node(cfg.tomography) == pipeline.RunSpec().pricing
    for cls in (Stopping, TomoNavConfig):  # built from a node, or Settings().rule: no default of their own
        assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(cls)), cls.__name__
    with pytest.raises(UserError, match=r"certificate.stop_at=1.5: a probability"):
        CertificateConfig(stop_at=1.5)
    with pytest.raises(UserError, match=r"certificate.stopat: no such setting \(valid: stop_at"):
        CertificateConfig.from_node({"stopat": 0.9})


SPECS = (pipeline.ScanSpec, pipeline.CompareSpec, pipeline.QuerySpec, pipeline.ReportSpec)


@pytest.mark.parametrize("spec", SPECS, ids=lambda c: c.__name__)
def test_each_verbs_spec_reads_its_yaml_as_the_command_line_composes_it(spec):
    """One default per setting: the spec's (read at import) is the composed config's (Hydra), and a
    key that is not a setting is refused in one line naming the valid ones."""
    assert spec.from_node(compose_config()[spec.node]) == spec() == spec.given()
    valid = ", ".join(f.name for f in dataclasses.fields(spec))
    with pytest.raises(UserError, match=rf"^{spec.node}\.colour: no such setting \(valid: {valid}\)$"):
        spec.from_node({"colour": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec().node_value = 1


@pytest.mark.parametrize(
    "spec, bad, expect",
    [
        (pipeline.ScanSpec, {"budget_seconds": 0}, "scan.budget_seconds=0: a positive number of seconds"),
        (pipeline.ScanSpec, {"fidelity_floor": "high"}, "scan.fidelity_floor=high: a number on"),
        (pipeline.ScanSpec, {"stop_at": 1.5}, "scan.stop_at=1.5: a probability in (0, 1]"),
        (pipeline.ScanSpec, {"examples": -1}, "scan.examples=-1: a whole number ≥ 0"),
        (pipeline.ScanSpec, {"min_loss": 1.5}, "scan.min_loss=1.5: a share of the accuracy in [0, 1)"),
        (pipeline.CompareSpec, {"max_drop": 1}, "compare.max_drop=1: a share of the accuracy in [0, 1)"),
        (pipeline.CompareSpec, {"correction": "fdr"}, "compare.correction=fdr (valid: holm, bh)"),
        (pipeline.CompareSpec, {"confidence": 1}, "compare.confidence=1: a probability in (0, 1)"),
        (pipeline.CompareSpec, {"measure": "yes"}, "compare.measure=yes (valid: auto, never, all)"),
        (pipeline.QuerySpec, {"measure": "often"}, "query.measure=often (valid: auto, never)"),
        (pipeline.QuerySpec, {"min_accuracy": 2}, "query.min_accuracy=2: an accuracy in [0, 1]"),
        (pipeline.QuerySpec, {"sample": -1}, "query.sample=-1: a whole number of tests ≥ 0"),
        (pipeline.ReportSpec, {"k": 0}, "report.k=0: the number of inputs shown per configuration"),
    ],
)
def test_a_bad_setting_is_one_line_from_its_spec(spec, bad, expect):
    with pytest.raises(UserError) as e:
        spec.given(**bad)
    assert str(e.value).startswith(expect) and "\n" not in str(e.value)


def test_the_certificate_has_one_default_per_stage_in_python_and_on_the_command_line():
    """certificate.epsilon is auto on stage=live and 0.01 on every replay: `certificate_for`, which
    Tester.search and the scan take their certificate from, reads the same; a setting given wins."""
    from testnav.pipeline import certificate_for

    live = CertificateConfig.from_node(compose_config(["stage=live"]).certificate)
    assert certificate_for(live=True) == live and live.epsilon == "auto"
    assert certificate_for(live=False) == CertificateConfig.from_node(compose_config().certificate)
    assert certificate_for(live=False).epsilon == 0.01
    assert certificate_for(live=True, epsilon=0.05, stop_at=None).epsilon == 0.05


def test_no_python_signature_writes_again_a_default_a_settings_yaml_holds():
    """tests/helpers/contracts.py's guard: over Tester's verbs, testnav.pipeline, testnav.findings,
    tomography.gate and testnav.report, a parameter named as a key of its verb's conf/settings/*.yaml
    defaults only to None (the spec's default). 55 did before issue 73."""
    assert unplaced_carriers() == []
    assert settings_written_twice() == []


def test_the_guard_finds_a_default_written_twice(monkeypatch):
    from testnav.tester import Tester

    def compare(self, baseline, max_drop=0.02, confidence=None):  # the planted default
        raise AssertionError("never called")

    monkeypatch.setattr(Tester, "compare", compare)
    assert settings_written_twice() == ["Tester.compare: max_drop=0.02 (conf/settings/compare.yaml holds max_drop)"]
    monkeypatch.setattr(Tester, "collate", lambda self: None, raising=False)
    assert unplaced_carriers() == ["Tester.collate"]


EXPERIMENTS = sorted(p.stem for p in (CONF / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_every_experiment_composes_and_sweeps_only_what_exists(name):
    with isolated_hydra(), initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"experiment={name}"], return_hydra_config=True)
    params = cfg.hydra.sweeper.params
    params = OmegaConf.to_container(params, resolve=True) if params is not None else {}
    valid = {"search": searches.names(), "fidelity": fidelity.names(), "benchmark": None}
    for key, value in params.items():
        if key in ("search", "fidelity") and "(" not in str(value):
            unknown = set(str(value).split(",")) - set(valid[key])
            assert not unknown, f"experiment={name} sweeps {key} {sorted(unknown)}, which do not exist"
    if name == "testnav_methods":  # the paper sweep is the figures' searches and the image metrics, from the registries
        assert params["search"].split(",") == searches.paper_searches()
        assert params["fidelity"].split(",") == fidelity.names("image")


# ------------------------------------------------------------------------------------------ benchmark


def test_benchmark_contract_is_abstract_and_met():
    assert inspect.isabstract(Benchmark)
    assert {"load", "prepare_metrics", "score", "data_description"} <= Benchmark.__abstractmethods__
    bench = instantiate(compose_config(["benchmark=mnist5k"]).benchmark)
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
    assert list(table["method"]) == [searches.info("nsga2").label, "my_search"]
    assert "my_search" not in pd.read_csv(tmp_path / "table2.csv")["method"].tolist()  # the paper's table stays its own
