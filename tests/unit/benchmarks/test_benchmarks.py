"""Every paper benchmark's loader says what to put where when its files are missing or unreadable
(tests/unit/benchmarks/test_artifacts.py feeds them the publishers' layouts)."""

import pytest


def test_cait_s36_builds_from_config():
    from testnav.models.classifier import ModelSpec

    m = ModelSpec("cait_s36_384", 200, input_size=384, random_weights=True).build()
    assert sum(p.numel() for p in m.parameters()) > 60e6 and m.classifier.out_features == 200


def test_benchmarks_are_built_by_name_like_every_plug_in_kind():
    from testnav import benchmarks
    from testnav.benchmarks.mnist5k import Mnist5k
    from testnav.errors import UserError

    listed = benchmarks.names()
    assert "mnist5k" in listed and "_template" not in listed and "qqp" in listed
    bench = benchmarks.make("mnist5k", test_per_class=3)
    assert isinstance(bench, Mnist5k) and bench.name == "mnist5k"
    with pytest.raises(UserError, match=r"unknown benchmark 'mnist6k' \(valid: .*mnist5k"):
        benchmarks.make("mnist6k")
    with pytest.raises(UserError, match=r"benchmark mnist5k has no setting 'per_class'"):
        benchmarks.make("mnist5k", per_class=3)
