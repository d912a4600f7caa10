"""What README.md and docs/*.md name in backticks exists: every repository path (`testnav/core/trace.py`,
`scripts/figures.py`, `conf/search/nsga2.yaml`, `tests/test_x.py::test_y`) and every Python name
(`testnav.searches.make`, `pipeline.runs.certified_run`, `Tester.search`), resolved against the code
as it is: a module by importing it, a class's attributes from its source. Text that is not a pointer
is left alone: placeholders (`results/runs/<date>/…`, `conf/benchmark/*.yaml`), system paths,
outputs a run writes (git-ignored), other libraries' names (`np.uint8`), configuration keys
(`certificate.stop_at`, `data.path`: a key of a conf/ YAML) and file names without a folder."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from functools import cache
from pathlib import Path

import pytest
import yaml

import testnav

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "testnav"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# top folders of the repository a path may start with; `conf/` is the package's (testnav/conf)
TOPS = ("testnav/", "scripts/", "tests/", "docs/", "notebooks/", "slurm/", "conf/", "results/")
PLACEHOLDER = re.compile(r"[<>*{}…|$=\s]|\.\.\.")
DOTTED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(\(.*\))?")
# a dotted span whose last part is one of these is a file name (`report.html`, `run.py`), not a name
EXTENSIONS = {
    *[
        "py",
        "md",
        "yaml",
        "yml",
        "json",
        "jsonl",
        "csv",
        "tsv",
        "txt",
        "parquet",
        "html",
        "png",
        "pt",
        "pth",
        "toml",
        "zip",
        "gz",
        "cfg",
        "ipynb",
        "tex",
    ],
}
# what a run or a study writes where the repository keeps none (the folders are git-ignored or the
# file is drawn only from tables a longer run makes)
GENERATED = ("results/runs/", "results/multirun/", "results/cache/", "results/figures/stopping.png")
# pointers that are right but name nothing in the repository, with why
ALLOWED = {
    **dict.fromkeys(
        ("testnav/searches/hill.py", "conf/search/hill.yaml", "testnav/fidelity/psnr.py", "conf/fidelity/psnr.yaml"),
        "docs/architecture.md's 'Adding one' writes them (tests/e2e/test_docs_architecture.py adds them to a copy)",
    ),
    "testnav/families/invert.py": "docs/architecture.md's 'Adding one' writes it (tests/e2e/test_docs_architecture.py)",
}


def spans(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every inline code span outside fenced blocks."""
    out, fenced = [], False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out += [(n, m.group(1)) for m in re.finditer(r"`([^`\n]+)`", line)]
    return out


def repo_path(text: str) -> str | None:
    """The repository path a span names, or None where it names none (placeholders, system paths)."""
    if (
        not text.startswith(TOPS)
        or PLACEHOLDER.search(text.split("::")[0])
        or (text.rstrip("/") + "/").startswith(GENERATED)
    ):
        return None
    return text


def path_exists(text: str) -> bool:
    rel, _, test = text.partition("::")
    rel = rel.rstrip("/")
    path = ROOT / rel if (ROOT / rel).exists() or not rel.startswith("conf") else PKG / rel
    if not path.exists():
        return False
    return not test or re.search(rf"^def {re.escape(test)}\(", path.read_text(), re.M) is not None


@cache
def modules() -> dict[str, str]:
    """Every module of the package: dotted name → source path."""
    out = {"testnav": str(PKG / "__init__.py")}
    for info in pkgutil.walk_packages(testnav.__path__, "testnav."):
        spec = info.module_finder.find_spec(info.name)
        if spec and spec.origin:
            out[info.name] = spec.origin
    return out


@cache
def classes() -> dict[str, list[set[str]]]:
    """class name → the names each class of that name defines (its body, `self.x = …`, its bases' names)."""
    found: dict[str, list[tuple[set[str], list[str]]]] = {}
    for origin in modules().values():
        for node in ast.walk(ast.parse(Path(origin).read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            names = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and sub is not node:
                    names.add(sub.name)
                elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.id)
                elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                    names.add(sub.attr)
            bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
            found.setdefault(node.name, []).append((names, bases))

    def closed(names, bases, seen):
        out = set(names)
        for b in bases:
            for n, bb in found.get(b, []) if b not in seen else []:
                out |= closed(n, bb, seen | {b})
        return out

    return {c: [closed(n, b, {c}) for n, b in defs] for c, defs in found.items()}


@cache
def config_keys() -> set[str]:
    """Every key path of a conf/ YAML, with and without its group (`certificate.stop_at`, `data.path`)."""
    keys = set()

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                keys.add(f"{prefix}{k}")
                walk(v, f"{prefix}{k}.")

    for f in (PKG / "conf").rglob("*.yaml"):
        data = yaml.safe_load(f.read_text())
        group = f.parent.relative_to(PKG / "conf").parts
        walk(data, "")
        walk(data, ".".join(group[1:] if group[:1] == ("settings",) else group) + ".")
        walk(data, f"{f.stem}.")
    return {k.lstrip(".") for k in keys}


def in_class(cls: str, attr: str) -> bool:
    return any(attr in names for names in classes().get(cls, []))


def resolve(module: str, parts: list[str]) -> bool:
    """`parts` found under `module`: by import and getattr, else as a class's attribute from its source."""
    obj = importlib.import_module(module)
    for i, part in enumerate(parts):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        if f"{obj.__name__}.{part}" in modules() if isinstance(obj, type(testnav)) else False:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
            continue
        if isinstance(obj, type):
            return all(in_class(obj.__name__, p) for p in parts[i : i + 1])  # an instance attribute
        # a module's objects carry the attribute (`findings.families`: its Findings)
        return i == len(parts) - 1 and any(
            in_class(c.__name__, part)
            for c in vars(obj).values()
            if isinstance(c, type) and c.__module__ == obj.__name__
        )
    return True


def python_name(text: str) -> tuple[str, list[str]] | None:
    """(module, attributes) a span names in the package, or None where it names nothing of it."""
    m = DOTTED.fullmatch(text)
    if not m or m.group(1).rsplit(".", 1)[1] in EXTENSIONS:
        return None
    head, *rest = m.group(1).split(".")
    if head == "testnav":
        return "testnav", rest
    if f"testnav.{head}" in modules():
        return None if m.group(1) in config_keys() else ("testnav", [head, *rest])
    if hasattr(testnav, head) or head in classes():
        return ("testnav", [head, *rest]) if hasattr(testnav, head) else (head, rest)
    owners = [name for name in modules() if name.rsplit(".", 1)[-1] == head]
    if owners and m.group(1) not in config_keys():
        return "|".join(owners), rest
    return None


def exists(name: tuple[str, list[str]]) -> bool:
    where, parts = name
    if where in classes() and not where.startswith("testnav"):
        return all(in_class(where, p) for p in parts[:1])
    return any(resolve(module, parts) for module in where.split("|"))


def pointers():
    for doc in DOCS:
        for line, text in spans(doc):
            if text in ALLOWED:
                continue
            path = repo_path(text)
            if path:
                yield doc, line, text, path_exists(path)
                continue
            name = python_name(text)
            if name:
                yield doc, line, text, exists(name)


def test_docs_name_only_what_exists():
    checked = list(pointers())
    stale = [f"{doc.relative_to(ROOT)}:{line}: `{text}`" for doc, line, text, ok in checked if not ok]
    assert not stale, "named in the docs but not in the repository:\n" + "\n".join(stale)
    assert len(checked) > 150  # the docs name this many pointers: the extraction still finds them


def test_conf_comments_name_only_files_that_exist():
    """A conf/ YAML's comments point at code (`# the tables: testnav/families/__init__.py`): it exists."""
    stale = [
        f"{f.relative_to(ROOT)}: {m.group(0)}"
        for f in sorted((PKG / "conf").rglob("*.yaml"))
        for line in f.read_text().splitlines()
        if "#" in line
        for m in re.finditer(r"(?:testnav|scripts|tests)/[\w/]+\.py", line.split("#", 1)[1])
        if not (ROOT / m.group(0)).exists()
    ]
    assert not stale, "named in a conf/ comment but not in the repository:\n" + "\n".join(stale)


@pytest.mark.parametrize(
    "text, found",
    [
        ("testnav/core/trace.py", True),
        ("testnav/core/nothing.py", False),
        ("conf/search/nsga2.yaml", True),
        ("tests/e2e/test_docs_pointers.py::test_docs_name_only_what_exists", True),
        ("tests/e2e/test_docs_pointers.py::test_gone", False),
        ("app.certified_run", False),
        ("pipeline.runs.certified_run", True),
        ("testnav.searches.make(name, **overrides)", True),
        ("Tester.search", True),
        ("Tester.nothing", False),
        ("registry.normalise", True),
        ("registry.nothing", False),
    ],
)
def test_the_check_tells_stale_from_present(text, found):
    path = repo_path(text)
    assert (path_exists(path) if path else exists(python_name(text))) == found


@pytest.mark.parametrize(
    "text",
    ["results/runs/<date>/<time>/", "np.uint8", "certificate.stop_at", "data.path", "report.html", "/etc/passwd"],
)
def test_text_that_is_no_pointer_is_left_alone(text):
    assert repo_path(text) is None and python_name(text) is None
