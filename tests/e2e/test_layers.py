"""The layers are import-linter's contracts in pyproject.toml, checked by `make lint` (docs/architecture.md).
That tool's acyclic contract looks at siblings (the children of each package); this test closes the
rest: no module of testnav imports, directly or through others, a module that imports it, a package's
__init__ and its own modules included. Function-level imports count, as they do for import-linter.
Below the facade (issue 73) what no import contract sees is read off the code: no module of the
library names or calls a Tester, the command line makes up no stand-in object, and no module reads
another's private member."""

import ast
from pathlib import Path

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


# --- below the facade: a Session and a spec, never the Tester (issue 73) -------------------------------
PKG = Path(__file__).resolve().parents[2] / "testnav"
FACADE = {"tester.py", "__main__.py", "__init__.py"}  # the package's root modules above the library
# private members of other libraries' objects that testnav reads (torch, hydra, os)
OUTSIDE = {"_exit", "_C", "_cdata", "_modules", "_version", "_instances"}


def library_files() -> list[Path]:
    """Every module below the facade: testnav/ but its command line (app/) and its root modules."""
    return [
        p
        for p in sorted(PKG.rglob("*.py"))
        if p.relative_to(PKG).parts[0] != "app" and not (p.parent == PKG and p.name in FACADE)
    ]


def facade_uses(source: str) -> list[str]:
    """What names or calls the facade in `source`: the name tester, _tester or Tester (an argument too),
    an attribute tester or _tester, an import of testnav.tester."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Name) and n.id in ("tester", "_tester", "Tester"):
            out.append(f"{n.lineno}: {n.id}")
        elif isinstance(n, ast.arg) and n.arg in ("tester", "_tester"):
            out.append(f"{n.lineno}: argument {n.arg}")
        elif isinstance(n, ast.Attribute) and n.attr in ("_tester", "tester"):
            out.append(f"{n.lineno}: {ast.unparse(n)}")
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names = [getattr(n, "module", None) or ""] + [a.name for a in n.names]
            if any(x == "tester" or x.endswith(".tester") for x in names):
                out.append(f"{n.lineno}: {ast.unparse(n)}")
    return out


def stand_ins(source: str) -> list[str]:
    """Objects made up in `source` to pass for another: type(name, bases, namespace), SimpleNamespace."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "type" and len(n.args) == 3:
            out.append(f"{n.lineno}: {ast.unparse(n)[:60]}")
        elif isinstance(n, ast.Name) and n.id == "SimpleNamespace":
            out.append(f"{n.lineno}: SimpleNamespace")
    return out


def private_reads(source: str) -> list[str]:
    """`obj._name` in `source` where obj is not self or cls and the module defines no `_name` itself
    (a function, class, module global or self._name of its own)."""
    tree = ast.parse(source)
    own = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(n.name)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
            own.add(n.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            own.add(n.id)
    return [
        f"{n.lineno}: {ast.unparse(n)}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and n.attr.startswith("_")
        and not n.attr.startswith("__")
        and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))
        and n.attr not in own
        and n.attr not in OUTSIDE
    ]


def test_below_the_facade_nothing_names_or_calls_a_tester():
    found = [f"{p.relative_to(PKG)}:{u}" for p in library_files() for u in facade_uses(p.read_text())]
    assert not found, "\n".join(found)
    planted = "def scan(tester):\n    return tester.search('tomonav'), tester._groundtruth_path()\n"
    assert sorted(facade_uses(planted)) == ["1: argument tester", "2: tester", "2: tester"]
    assert sorted(facade_uses("findings.session = run._tester\nfrom testnav.tester import Tester\n")) == [
        "1: run._tester",
        "2: from testnav.tester import Tester",
    ]


def test_the_command_line_builds_no_stand_in_objects():
    found = [f"{p.name}:{u}" for p in sorted((PKG / "app").glob("*.py")) for u in stand_ins(p.read_text())]
    assert not found, "\n".join(found)
    assert stand_ins('run = type("Run", (), {"benchmark": b, "session": s})()') == [
        "1: type('Run', (), {'benchmark': b, 'session': s})"
    ]


CLI_DRIVERS = ("run_inprocess", "run_subprocess", "tests.e2e", '"run.py"')


def cli_drives(src: str) -> list[str]:
    """Lines of a test module that start run.py: the in-process or subprocess runners, an e2e helper, the
    script's path. A test of what the CLI does belongs in tests/e2e (the unit tier drives no CLI)."""
    return [f"{i}: {line.strip()}" for i, line in enumerate(src.splitlines(), 1) if any(d in line for d in CLI_DRIVERS)]


def test_the_unit_tier_drives_no_cli():
    unit = PKG.parent / "tests" / "unit"
    found = [f"{p.relative_to(unit)}:{u}" for p in sorted(unit.rglob("test_*.py")) for u in cli_drives(p.read_text())]
    assert not found, "\n".join(found)
    planted = "from tests.helpers.cli_helpers import run_inprocess as run\nr = run(['stage=live'], tmp)\n"
    assert cli_drives(planted) == ["1: from tests.helpers.cli_helpers import run_inprocess as run"]
    assert cli_drives('subprocess.Popen([sys.executable, str(ROOT / "run.py"), *args])') != []


def test_no_private_member_is_read_across_modules():
    found = [f"{p.relative_to(PKG)}:{r}" for p in sorted(PKG.rglob("*.py")) for r in private_reads(p.read_text())]
    assert not found, "\n".join(found)
    planted = "def inputs_of(session):\n    session._inputs = Inputs(session)\n    return session._inputs\n"
    assert private_reads(planted) == ["2: session._inputs", "3: session._inputs"]
    assert private_reads("class A:\n    def f(self, other):\n        return self._x + other._x\n") == []


# --- the house's size rules: no function over 80 lines, no class over 15 instance attributes ------------
def oversized(source: str, where: str = "") -> list[str]:
    """Functions of more than 80 lines and classes with more than 15 instance attributes (the fields a
    class body annotates, but ClassVars, and every self.name it assigns)."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.end_lineno - n.lineno + 1 > 80:
            out.append(f"{where}: {n.name}")
        elif isinstance(n, ast.ClassDef):
            fields = {
                s.target.id
                for s in n.body
                if isinstance(s, ast.AnnAssign)
                and isinstance(s.target, ast.Name)
                and "ClassVar" not in ast.unparse(s.annotation)
            }
            assigned = {
                t.attr
                for s in ast.walk(n)
                if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                for target in (s.targets if isinstance(s, ast.Assign) else [s.target])
                for t in ast.walk(target)
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            }
            if len(fields | assigned) > 15:
                out.append(f"{where}: class {n.name}")
    return out


def test_no_function_over_80_lines_and_no_class_over_15_attributes():
    found = {o for p in sorted(PKG.rglob("*.py")) for o in oversized(p.read_text(), str(p.relative_to(PKG)))}
    assert not found, "\n".join(sorted(found))
    long = "def f():\n" + "    x = 1\n" * 80
    wide = "class A:\n" + "".join(f"    a{i}: int\n" for i in range(10)) + "    def __init__(self):\n"
    wide += "".join(f"        self.b{i} = {i}\n" for i in range(6))
    assert oversized(long) == [": f"] and oversized(wide) == [": class A"]
    assert oversized(wide.replace("self.b5 = 5", "b5 = 5")) == []
