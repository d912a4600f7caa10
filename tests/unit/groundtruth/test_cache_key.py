"""The ground-truth key hashes only the code that computes the table, read as code: prose edits keep
a cached table (hours of GPU on a paper benchmark), behaviour edits and unrelated modules are told apart."""

import pytest

from testnav.core import cache
from testnav.pipeline import compose_benchmark


@pytest.fixture(scope="module")
def bench():
    return compose_benchmark(["benchmark=mnist5k"])


def with_edited(monkeypatch, tmp_path, module, edit):
    src = cache.module_path(module)
    copy = tmp_path / src.name
    copy.write_text(edit(src.read_text()))
    original = cache.module_path
    monkeypatch.setattr(cache, "module_path", lambda m: copy if m == module else original(m))


def test_docstring_and_comment_edits_keep_the_key_a_behaviour_change_moves_it(bench, monkeypatch, tmp_path):
    key = bench.code_digest()
    with monkeypatch.context() as m:
        with_edited(
            m,
            tmp_path,
            "testnav.families.brightness",
            lambda s: s.replace('"""', '"""Reworded. ', 1).replace("\n", "  # a comment\n", 3),
        )
        assert bench.code_digest() == key
    with monkeypatch.context() as m:  # a helper the family imports, changed in behaviour
        with_edited(m, tmp_path, "testnav.families.affine", lambda s: s.replace("(width - 1) / 2", "(width - 2) / 2"))
        assert bench.code_digest() != key
    assert bench.code_digest() == key


def test_only_the_modules_the_table_uses_are_hashed(bench):
    parts = bench.code_parts()
    _, modules = cache.modules_digest(cache.object_modules(*parts))
    assert {
        "testnav.families.brightness",
        "testnav.families.shear",
        "testnav.fidelity.ssim",
        "testnav.benchmarks.mnist5k",
        "testnav.models.lenet",
    } <= set(modules)
    for unrelated in (
        "testnav.families.glass_blur",
        "testnav.code.benchmark",
        "testnav.searches.tomonav",
        "testnav.figures.loader",
        "testnav",
    ):
        assert unrelated not in modules


def test_code_digest_reads_code_not_prose():
    a = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    assert cache.code_digest(a) == cache.code_digest('def f(x):\n    """Other doc."""\n\n    return x + 1\n')
    assert cache.code_digest(a) != cache.code_digest('def f(x):\n    """Doc."""\n    return x + 2\n')
