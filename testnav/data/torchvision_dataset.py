"""A torchvision data set in its own on-disk layout, with download=False: MNIST
(root/MNIST/raw/*-ubyte). CIFAR-10 (cifar10.py) and GTSRB (gtsrb.py) have their own readers:
torchvision insists on CIFAR-10's archive checksums and knows one of GTSRB's three layouts."""

from __future__ import annotations

import numpy as np
import torch

from ..errors import UserError
from . import require, subset, to_tensor

LAYOUT = {
    "MNIST": "root/MNIST/raw/ with t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (and train-* for training)",
}


class TorchvisionData:
    def __init__(self, dataset: str, root: str, split: str = "test", n: int | None = None, seed: int = 0, image_size=None):
        if dataset not in LAYOUT:
            raise UserError(f"data.dataset={dataset} (valid: {', '.join(LAYOUT)})")
        self.dataset, self.root, self.split, self.n, self.seed, self.image_size = dataset, root, split, n, int(seed), image_size

    def _open(self):
        import torchvision.datasets as tvd

        root = require(self.root, f"put {self.dataset} there in torchvision's layout: {LAYOUT[self.dataset]}")
        cls = getattr(tvd, self.dataset)
        try:
            return cls(str(root), train=self.split == "train", download=False)
        except (RuntimeError, FileNotFoundError) as e:
            raise UserError(f"{self.dataset} not found under {root} ({str(e).splitlines()[0]}): "
                            f"expected {LAYOUT[self.dataset]}") from None

    def load(self):
        ds = self._open()
        keep = subset(len(ds), self.n, self.seed)
        if hasattr(ds, "data") and self.image_size is None:  # in-memory arrays: no PIL round trip
            data = ds.data[keep] if isinstance(ds.data, np.ndarray) else ds.data.numpy()[keep]
            x = torch.from_numpy(np.asarray(data))
            x = (x[:, None] if x.ndim == 3 else x.permute(0, 3, 1, 2)).float() / 255.0
            labels = torch.as_tensor(np.asarray(ds.targets)[keep], dtype=torch.int64)
            return x.contiguous(), labels
        pairs = [ds[int(i)] for i in keep]
        return to_tensor([p[0] for p in pairs], self.image_size), torch.tensor([int(p[1]) for p in pairs])

    def describe(self) -> dict:
        return {"reader": "torchvision", "dataset": self.dataset, "root": str(self.root), "split": self.split,
                "n": self.n, "seed": self.seed, "image_size": self.image_size, "size": len(self._open())}
