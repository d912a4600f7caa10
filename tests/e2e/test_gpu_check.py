"""scripts/gpu_check.py without a GPU: the skip line, and every section's CPU-side logic on tiny
models, batches and lattices (`--device cpu --tiny`). Nothing here is timed."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu_check():
    sys.path.insert(0, str(ROOT / "scripts"))
    return importlib.import_module("gpu_check")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present: the check would run, not skip")
def test_without_cuda_it_prints_one_skip_line_and_exits_0(gpu_check, tmp_path, capsys):
    assert gpu_check.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("gpu-check: SKIPPED: no CUDA device")
    assert not list(tmp_path.iterdir())


def test_tiny_cpu_run_of_the_model_and_family_sections(gpu_check, tmp_path, capsys):
    rc = gpu_check.main(
        [
            "--device",
            "cpu",
            "--tiny",
            "--no-compile",
            "--sections",
            "cait",
            "text",
            "families",
            "--families",
            "brightness",
            "pixelate",
            "--out",
            str(tmp_path),
        ]
    )
    printed = capsys.readouterr().out
    assert rc == 0, printed
    report = json.loads((tmp_path / "gpu.json").read_text())
    assert report["failures"] == []
    assert {r["setting"] for r in report["cait"]["rows"]} == {"fp32", "bf16 autocast", "bf16 + channels-last"}
    assert all(r["images_per_s"] > 0 for r in report["cait"]["rows"])
    assert report["cait"]["best"]["images_per_s"] == max(r["images_per_s"] for r in report["cait"]["rows"])
    assert report["text"]["codegen"]["layers"] == 2 and report["text"]["roberta"]["sequences_per_s"] > 0
    fams = report["families"]["rows"]
    assert {(r["family"], r["size"]) for r in fams} == {(f, s) for f in ("brightness", "pixelate") for s in (32, 64)}
    assert all(r["max_abs_diff_device_cpu"] == 0 for r in fams)  # same device: the same output
    md = (tmp_path / "gpu.md").read_text()
    assert "## CaiT-S36 at 384 px" in md and "## Image families" in md and "## Failures" not in md
    rows = [line for line in printed.splitlines() if line.startswith("gpu-check | ")]
    assert len(rows) == len(report["cait"]["rows"]) + 1 + 2 + len(fams)


@pytest.mark.slow
def test_tiny_cpu_run_of_every_section(gpu_check, tmp_path, capsys):
    """All ten families, and the mnist5k ground truth twice (the pinned LeNet-5, loaded twice)."""
    rc = gpu_check.main(["--device", "cpu", "--tiny", "--no-compile", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    report = json.loads((tmp_path / "gpu.json").read_text())
    assert len(report["families"]["rows"]) == 20
    g = report["groundtruth"]
    assert g["configurations"] == 16 and g["delta_equal"] and g["pstar_identical"] and g["rho_max_abs_diff"] == 0
    assert report["projection"]["inferences"] == 12_960_000
    assert "## mnist5k ground truth" in (tmp_path / "gpu.md").read_text()


def test_a_failing_section_gives_a_non_zero_exit_and_is_reported(gpu_check, tmp_path, monkeypatch, capsys):
    def broken(c):
        raise RuntimeError("boom")

    monkeypatch.setattr(gpu_check, "section_text", broken)
    assert gpu_check.main(["--device", "cpu", "--tiny", "--sections", "text", "--out", str(tmp_path)]) == 1
    assert "text | FAILED: RuntimeError: boom" in capsys.readouterr().out
    assert json.loads((tmp_path / "gpu.json").read_text())["failures"] == ["text: RuntimeError: boom"]


def test_compare_tables_catches_a_changed_delta_and_a_rho_beyond_tolerance(gpu_check):
    df = pd.DataFrame(
        {"t1": [0, 0, 1, 1], "t2": [0, 1, 0, 1], "delta": [0.0, 0.2, 0.5, 0.9], "ssim": [1.0, 0.9, 0.7, 0.2]}
    )
    assert gpu_check.compare_tables(df, df.iloc[::-1].copy())["ok"]  # row order does not matter
    moved = df.assign(delta=[0.0, 0.2, 0.6, 0.9])
    assert not gpu_check.compare_tables(df, moved)["delta_equal"]
    off = df.assign(ssim=[1.0, 0.9, 0.7, 0.2 + 10 * gpu_check.RHO_TOL])
    r = gpu_check.compare_tables(df, off)
    assert r["delta_equal"] and not r["ok"] and r["rho_max_abs_diff"] > gpu_check.RHO_TOL


def test_largest_batch_doubles_until_out_of_memory(gpu_check):
    def run(b):
        if b > 40:
            raise torch.OutOfMemoryError("CUDA out of memory")

    assert gpu_check.largest_batch(run, 5, 1000) == 40
    assert gpu_check.largest_batch(run, 5, 20) == 20
    with pytest.raises(ValueError):
        gpu_check.largest_batch(lambda b: (_ for _ in ()).throw(ValueError("not memory")), 5, 20)
