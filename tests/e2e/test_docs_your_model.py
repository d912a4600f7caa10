"""docs/your-model.md as a new user meets it: every code block of each scenario runs, in order, in a
fresh directory holding what the page says the user starts from (tests/helpers/user_models.py). A YAML block
(or Python block) whose info string names a file is written there (a module, a pytest module, a CI job);
bash blocks run with `python run.py` pointing at the checkout's run.py; other Python blocks run as one
script each. The sections run minutes together on two
cores (their times: docs/your-model.md's closing note in the report), so they are in make test-all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT
from tests.helpers.user_models import image_scenario, text_scenario

DOC = ROOT / "docs" / "your-model.md"
FENCE = re.compile(r"^```(\w+)[ \t]*([^\n]*)\n(.*?)^```", re.S | re.M)


def sections() -> dict[str, list[tuple[str, str, str]]]:
    """{section title: [(language, info, code), …]} for every `## ` section with code."""
    out = {}
    for part in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        blocks = FENCE.findall(body)
        if blocks:
            out[title.strip()] = blocks
    return out


def test_the_page_has_its_scenarios():
    assert list(sections()) == [
        "What breaks it: Tester.scan()",
        "An image classifier from YAML",
        "An image classifier from Python",
        "A text classifier from YAML",
        "A text classifier from Python",
        "A model behind a prediction function",
        "What breaks it, and a CI gate",
        "Did the new version get less robust?",
    ]
    for blocks in sections().values():
        assert {lang for lang, _, _ in blocks} <= {"yaml", "bash", "python"}


def prepare(tmp_path):
    """What the page says the user starts from: photos/, resnet18.pt, reviews.csv, my_bert/."""
    img = image_scenario(tmp_path / "_artifacts")
    txt = text_scenario(tmp_path / "_text")
    os.replace(img["photos"], tmp_path / "photos")
    os.replace(img["model"], tmp_path / "resnet18.pt")
    os.replace(txt["data"], tmp_path / "reviews.csv")
    os.replace(txt["model"], tmp_path / "my_bert")


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("title", list(sections()))
def test_every_snippet_runs(title, tmp_path):
    prepare(tmp_path)
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    for i, (lang, info, code) in enumerate(sections()[title]):
        if lang == "yaml" or (lang == "python" and info):  # a file the user writes (a config, a test, a CI job)
            assert info, f"{title}: a YAML block must name its file (```yaml DIR/benchmark/NAME.yaml)"
            (tmp_path / info).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / info).write_text(code)
            continue
        if lang == "bash":
            cmd = ["bash", "-euo", "pipefail", "-c", code.replace("python run.py", f"python {ROOT / 'run.py'}")]
        else:
            (tmp_path / f"cell{i}.py").write_text(code)
            cmd = [sys.executable, f"cell{i}.py"]
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1100)
        assert r.returncode == 0, f"{title}, block {i + 1} ({lang}) failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    print(f"{title}: {time.perf_counter() - t0:.1f} s")
    if title.startswith("An image classifier from YAML"):
        runs = sorted(p.name for p in (tmp_path / "results" / "runs").glob("*/*"))
        assert any(n.endswith("_my5_ssim_nsga2_s0") for n in runs) and any(n.endswith("_my5_query") for n in runs)
        assert any(n.endswith("_my5_ssim_tomonav_s0") for n in runs)


def readme_blocks(lang: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [c for kind, _, c in FENCE.findall(text) if kind == lang]


def machine_free(line: str) -> str:
    """A printed line without what is the machine's own: the projected time."""
    return re.sub(r"projected at most [\d.]+ (s|min|h)", "projected at most …", line)


def test_the_readme_has_one_runnable_cell_and_quotes_its_output():
    (cell,) = readme_blocks("python")
    assert "t.scan()" in cell and "print(findings)" in cell
    (quoted,) = readme_blocks("text")
    assert quoted.startswith("What breaks LogisticRegression on digits?")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_readme_example_runs_as_it_is_and_prints_what_the_readme_quotes(tmp_path):
    """The README's cell, as one script in an empty folder: it runs, and the lines the README quotes
    under "It prints" are what it prints (the projected time, the machine's, left out)."""
    (code,) = readme_blocks("python")
    (tmp_path / "readme.py").write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the installed testnav, from anywhere
    env["TESTNAV_CACHE"] = str(tmp_path / "cache")  # a first run, as a new user's: nothing cached yet
    r = subprocess.run(
        [sys.executable, "readme.py"], cwd=tmp_path, capture_output=True, text=True, timeout=880, env=env
    )
    assert r.returncode == 0, r.stderr[-3000:]
    printed = [machine_free(line) for line in r.stdout.splitlines()]
    quoted = [machine_free(line) for line in readme_blocks("text")[0].splitlines() if line != "…"]
    assert printed[: len(quoted)] == quoted
    assert (tmp_path / "report.html").exists() and (tmp_path / "scan" / "findings.json").exists()
