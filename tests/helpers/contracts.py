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
