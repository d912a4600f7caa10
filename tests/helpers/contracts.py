"""Reusable contract harnesses, as torchmetrics' MetricTester: what every plug-in of a kind must
do, checked on one plug-in at a time. tests/unit/registry/test_contracts.py runs them over everything the
registries list (`testnav.searches.names()`, `testnav.fidelity.names()`, `testnav.signals.names()`,
every table of `testnav.families.tables()`), so a new plug-in is tested with no list to edit."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import torch
from hydra.utils import get_class

from testnav.core.oracle import TableOracle
from testnav.core.table import Objectives
from testnav.groundtruth.synthetic import synthetic_table
from testnav.searches import Search, Style


def check_defaults_written_once(registry, name: str) -> None:
    """The YAML is the one place a plug-in's defaults are written: no `__init__` of its class (nor of
    a base its **params reach) declares a default for a setting the YAML holds, nor does a dataclass
    the plug-in keeps its settings in (TomoNav's `config`); and `make(name)` calls the class with
    exactly the YAML's settings."""
    node = registry.node(name)
    cls = get_class(node["_target_"])
    settings = {k: v for k, v in node.items() if not k.startswith("_")}
    presentation = ("label", "style")  # a search's own fallbacks (Search.__init__), for one without a YAML
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        for p in inspect.signature(init).parameters.values() if init is not None else ():
            assert p.name not in settings or p.name in presentation or p.default is inspect.Parameter.empty, (
                f"{klass.__name__}.__init__ defaults {p.name}={p.default!r}, a setting its YAML holds"
            )
    given, own, init = [], cls.__dict__.get("__init__"), cls.__init__

    def spy(self, *args, **kwargs):
        given.append(kwargs)
        init(self, *args, **kwargs)

    cls.__init__ = spy
    try:
        built = registry.make(name)
    finally:
        if own is None:
            del cls.__init__
        else:
            cls.__init__ = own
    assert given == [settings], f"{name}: make built it with {given}, its YAML holds {settings}"
    for held in [v for k, v in vars(built).items() if dataclasses.is_dataclass(v) and k not in presentation]:
        for f in dataclasses.fields(held):
            assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING, (
                f"{type(held).__name__}.{f.name} has a default in Python"
            )


# A verb's settings, written once (issue 73): which signatures carry the keys of which
# conf/settings/<verb>.yaml. A module of testnav.pipeline or testnav.report and a public method of
# Tester that are not listed fail the check, so a new one is placed by a person, not skipped.
CARRIERS = {
    "certificate": ["Tester.search", "testnav.pipeline.runs", "testnav.pipeline.live", "testnav.pipeline.resolution"],
    "scan": [
        "Tester.scan",
        "testnav.pipeline.scan",
        "testnav.pipeline.composition",
        "testnav.findings",
        "testnav.report.scan",
    ],
    "compare": [
        "Tester.compare",
        "Tester.assert_no_regression",
        "testnav.pipeline.compare",
        "testnav.pipeline.localise",
        "testnav.pipeline.warm",
        "testnav.pipeline.noninferiority",
        "testnav.pipeline.paired",
        "testnav.pipeline.record",
        "testnav.report.compare",
    ],
    "query": ["Tester.query", "Tester.assert_robust", "testnav.tomography.gate", "testnav.pipeline.tomography"],
    "tomography": ["Tester.tomography", "testnav.pipeline.tomography"],
    "report": [
        "Tester.report",
        "Tester.examples",
        "testnav.report",
        "testnav.report.facts",
        "testnav.report.page",
        "testnav.report.plots",
        "testnav.report.template",
        "testnav.report.browser",
    ],
    "groundtruth": ["Tester.groundtruth", "testnav.pipeline.config", "testnav.pipeline.golden"],
    "check": [],
}
# what carries none of them: the facade's other methods, the pipeline's package and its specs
NO_SETTINGS = ["Tester", "testnav.pipeline", "testnav.pipeline.specs"]


def settings_keys() -> dict[str, set]:
    """conf/settings/<verb>.yaml → its keys."""
    from omegaconf import OmegaConf

    from testnav.paths import CONF

    return {f.stem: set(OmegaConf.load(f)) for f in sorted((CONF / "settings").glob("*.yaml"))}


def carried(name: str):
    """(qualified name, callable) of what `name` stands for: a Tester method, or every function,
    class (its __init__) and method a module defines."""
    import importlib

    from testnav.tester import Tester

    if name.startswith("Tester"):
        attr = name.partition(".")[2] or "__init__"
        yield name, getattr(Tester, attr)
        return
    module = importlib.import_module(name)
    for attr, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{name}.{attr}", obj
        if inspect.isclass(obj):
            for n, m in vars(obj).items():
                if inspect.isfunction(m) and n != "__init__":
                    yield f"{name}.{attr}.{n}", m


def settings_written_twice() -> list[str]:
    """Every parameter, in the signatures that carry a verb's settings, named as a key of that verb's
    conf/settings/<verb>.yaml and given a default other than None (None: the spec's default, the
    YAML's; a dataclass field's default factory, an empty container, is not a setting's default).
    Each is one line: where, and the default written again."""
    keys = settings_keys()
    assert set(CARRIERS) == set(keys), f"conf/settings holds {sorted(keys)}, CARRIERS names {sorted(CARRIERS)}"
    out = []
    for verb, names in CARRIERS.items():
        for name in names:
            for where, fn in carried(name):
                try:
                    params = inspect.signature(fn).parameters.values()
                except (TypeError, ValueError):
                    continue
                for p in params:
                    written = p.default is not inspect.Parameter.empty and p.default is not None
                    if p.name in keys[verb] and written and repr(p.default) != "<factory>":
                        out.append(f"{where}: {p.name}={p.default!r} (conf/settings/{verb}.yaml holds {p.name})")
    return sorted(set(out))


def unplaced_carriers() -> list[str]:
    """Modules of testnav.pipeline and testnav.report, and public methods of Tester, that CARRIERS does
    not place."""
    import importlib
    import pkgutil

    from testnav.tester import Tester

    placed = {n for names in CARRIERS.values() for n in names} | set(NO_SETTINGS)
    every = ["testnav.pipeline", "testnav.report"]
    for pkg in ("testnav.pipeline", "testnav.report"):
        every += [f"{pkg}.{m.name}" for m in pkgutil.iter_modules(importlib.import_module(pkg).__path__)]
    verbs = [f"Tester.{n}" for n, m in vars(Tester).items() if inspect.isfunction(m) and not n.startswith("_")]
    return [n for n in every if n not in placed] + [n for n in verbs if n not in placed and n not in OTHER_METHODS]


# Tester's methods that take no verb's settings (names, records, the inputs behind a configuration)
OTHER_METHODS = {"Tester.configuration", "Tester.name", "Tester.perturb", "Tester.record", "Tester.save"}


# ------------------------------------------------------------------------------------------ searches


def small_oracle(signals=()) -> TableOracle:
    df = synthetic_table("pairs", n=3, levels=4, seed=1)
    rng = np.random.default_rng(0)
    for s in signals:
        df[s] = rng.random(len(df))
    return TableOracle(Objectives.from_table(df, "rho", 1.0, signals=signals))


def check_search(make, info, name: str, budget: int = 60) -> None:
    """Built by name; labelled and styled as its YAML says; runs in replay on a small table within
    its budget, proposing valid indices, the same ones for the same seed."""
    search = make(name)
    assert isinstance(search, Search) and search.name == name
    shown = info(name)
    assert (search.label, search.style) == (shown.label, shown.style) and isinstance(shown.style, Style)
    assert set(search.requires) <= set(search.objectives) and "delta" not in search.requires
    assert search.replay_only is False, f"{name}: its default settings must run live too"
    runs = []
    for _ in range(2):
        s = make(name)
        oracle = small_oracle(s.requires)
        s.fit(oracle.lattice, budget)
        s.check(oracle.lattice, budget)
        runs.append(s.run(oracle, budget, seed=3))
    a = runs[0]
    assert len(a) <= budget and a.dtype.kind == "i" and ((0 <= a) & (a < oracle.lattice.size)).all()
    assert np.array_equal(a, runs[1]), f"{name} is not deterministic per seed"


# ------------------------------------------------------------------------------------------ families


def check_family(family, x: torch.Tensor, levels: int) -> None:
    """Level 0 is the identity; every level keeps shape, dtype and [0, 1] (images), changes the
    input, and is reproducible from the generator's seed; a random family changes with it."""

    def gen(seed):
        return torch.Generator().manual_seed(seed)

    assert family(x, 0, gen(0)) is x
    for level in range(1, levels + 1):
        out = family(x, level, gen(3))
        assert out.shape == x.shape and out.dtype == x.dtype, (family.name, level)
        assert out.min() >= 0 and out.max() <= 1, (family.name, level)
        assert torch.equal(out, family(x, level, gen(3))), f"{family.name} level {level} is not reproducible"
        assert not torch.equal(out, x), f"{family.name} level {level} leaves the input unchanged"
    if family.random:
        assert not torch.equal(family(x, levels, gen(1)), family(x, levels, gen(2)))
