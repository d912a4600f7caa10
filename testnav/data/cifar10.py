"""CIFAR-10 in torchvision's layout (root/cifar-10-batches-py/test_batch, data_batch_1..5),
read directly: the python pickles of the official archive, 32×32 RGB."""

from __future__ import annotations

import pickle

import numpy as np
import torch

from . import require, subset


class Cifar10:
    def __init__(self, root: str, split: str = "test", n: int | None = None, seed: int = 0):
        self.root, self.split, self.n, self.seed = root, split, n, int(seed)

    def files(self):
        base = require(self.root, "put CIFAR-10's python version there, unpacked: root/cifar-10-batches-py/")
        base = base / "cifar-10-batches-py" if (base / "cifar-10-batches-py").exists() else base
        names = ["test_batch"] if self.split == "test" else [f"data_batch_{i}" for i in range(1, 6)]
        return [require(base / n, f"CIFAR-10's {n} (from cifar-10-python.tar.gz)") for n in names]

    def load(self):
        xs, ys = [], []
        for f in self.files():
            with open(f, "rb") as fh:
                batch = pickle.load(fh, encoding="latin1")
            xs.append(np.asarray(batch["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(batch["labels"], dtype=np.int64))
        x, y = np.concatenate(xs), np.concatenate(ys)
        keep = subset(len(x), self.n, self.seed)
        return torch.from_numpy(x[keep]).float() / 255.0, torch.from_numpy(y[keep])

    def describe(self) -> dict:
        return {
            "reader": "cifar10",
            "root": str(self.root),
            "split": self.split,
            "n": self.n,
            "seed": self.seed,
            "bytes": sum(f.stat().st_size for f in self.files()),
        }
