"""docs/architecture.md's "Adding one": each plug-in its code blocks show, written into a copy of the
repository as the doc says (one module plus one YAML; for a family one module plus one table
entry), is then found everywhere: the registries, the figure groups, Table 2, Tester and the
contract tests. The copy's own files are counted, so the doc's "two files" claim is checked too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def blocks_after(text: str, heading: str) -> dict[str, str]:
    """{path: code} of every "`path`:" line followed by a fenced block, under `### heading`."""
    section = text.split(f"### {heading}", 1)[1].split("\n### ", 1)[0]
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"`([\w/.]+\.(?:py|yaml))`[^\n]*:\n\n```\w*\n(.*?)```", section, re.S)
    }


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    dst = tmp_path_factory.mktemp("repo")
    for name in ("testnav", "conf", "tests"):
        shutil.copytree(ROOT / name, dst / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("run.py", "pyproject.toml"):
        shutil.copy(ROOT / name, dst / name)
    text = DOC.read_text()
    written = {}
    for heading in ("A search", "A fidelity metric", "A family"):
        for rel, code in blocks_after(text, heading).items():
            path = dst / rel
            if rel.startswith("conf/families/"):  # one entry appended to an existing table
                path.write_text(path.read_text() + code)
            else:
                path.write_text(code)
            written.setdefault(heading, []).append(rel)
    return dst, written


def run(copy_dir: Path, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy_dir)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=copy_dir, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_each_plugin_of_the_doc_takes_two_files(copy):
    _, written = copy
    assert {h: len(v) for h, v in written.items()} == {"A search": 2, "A fidelity metric": 2, "A family": 2}


@pytest.mark.slow
def test_the_docs_plugins_appear_in_the_registries_table2_and_tester(copy):
    copy_dir, _ = copy
    r = run(
        copy_dir,
        """
import testnav, torch, pandas as pd, tempfile
assert testnav.__file__.startswith(COPY), testnav.__file__
from testnav import searches, fidelity, families
assert "hill" in searches.group("baseline") and "psnr" in fidelity.names("image")
assert families.make("invert", image_size=32).name == "invert"
from testnav.figures.tables import write_table2
runs = pd.DataFrame([{"search": s, "benchmark": "b", "fidelity": f, "seed": k, "auc_recall": 0.5}
                     for s in ("nsga2", "hill") for f in ("ssim", "psnr") for k in (0, 1)])
out = tempfile.mkdtemp(); write_table2(runs, __import__("pathlib").Path(out))
t2 = open(out + "/table2.md").read()
assert "Hill climbing" in t2 and "PSNR" in t2, t2
model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 4)).eval()
x, y = torch.rand(16, 3, 32, 32, generator=torch.Generator().manual_seed(0)), torch.arange(16) % 4
t = testnav.Tester(model, (x, y), families=["invert", "brightness"], levels=3, fidelity="psnr", cache_dir=out)
run = t.search("hill", budget=9, seed=0)
assert run.summary["search"] == "hill" and run.summary["fidelity"] == "psnr", run.summary
print("ok")
""".replace("COPY", repr(str(copy_dir))),
    )
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


@pytest.mark.slow
def test_the_contract_tests_pick_the_docs_plugins_up(copy):
    copy_dir, _ = copy
    env = {**os.environ, "PYTHONPATH": str(copy_dir)}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rA",
            "-p",
            "no:cacheprovider",
            "-k",
            "hill or psnr or invert",
            "tests/unit/registry/test_contracts.py",
            "-m",
            "not slow",
        ],
        cwd=copy_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    passed = re.findall(r"^PASSED tests/unit/registry/test_contracts.py::\S+", r.stdout, re.M)
    assert sum(any(k in p for k in ("hill", "psnr", "invert")) for p in passed) >= 4, r.stdout[-2000:]
