"""The layers are import-linter's contracts in pyproject.toml, checked by `make lint` (docs/architecture.md).
That tool's acyclic contract looks at siblings (the children of each package); this test closes the
rest: no module of testnav imports, directly or through others, a module that imports it, a package's
__init__ and its own modules included. Function-level imports count, as they do for import-linter."""

import grimp
import pytest


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("testnav", cache_dir=None)


def cycles(graph) -> list[str]:
    """One line per direct import a → b that closes a cycle (b reaches a back)."""
    return [
        " -> ".join([a, *graph.find_shortest_chain(importer=b, imported=a)])
        for a in sorted(graph.modules)
        for b in sorted(graph.find_modules_directly_imported_by(a))
        if graph.chain_exists(importer=b, imported=a)
    ]


def test_no_import_cycle_between_any_two_modules(graph):
    assert not cycles(graph), "\n".join(cycles(graph))


def test_an_import_that_closes_a_loop_is_found():
    g = grimp.build_graph("testnav", cache_dir=None)
    g.add_import(importer="testnav.core.lattice", imported="testnav.pipeline.runs")  # pipeline.runs imports core
    assert "testnav.core.lattice -> testnav.pipeline.runs" in "\n".join(cycles(g))
