"""MNIST's idx files as LeCun distributes them (`t10k-images-idx3-ubyte.gz`, …), gzipped or
unpacked, in root/MNIST/raw/ (torchvision's layout), root/raw/ or root itself."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import torch

from ..errors import UserError
from . import require, subset

FILES = {
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
}
LAYOUT = (
    "root/MNIST/raw/ (or root/) with t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, gzipped or not "
    "(and train-* for training)"
)


def read_idx(path: Path) -> np.ndarray:
    """An idx file: magic (0, 0, type 0x08 = uint8, ndim), ndim big-endian sizes, then the data."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or dtype != 0x08:
        raise UserError(f"{path} is not an idx file of unsigned bytes (magic {raw[:4].hex()})")
    shape = struct.unpack(f">{ndim}I", raw[4 : 4 + 4 * ndim])
    data = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(shape)):
        raise UserError(f"{path} holds {data.size} bytes of data for shape {shape}: a truncated download?")
    return data.reshape(shape)


class MnistIdx:
    def __init__(self, root: str, split: str = "test", n: int | None = None, seed: int = 0):
        if split not in FILES:
            raise UserError(f"MNIST split={split} (valid: {', '.join(FILES)})")
        self.root, self.split, self.n, self.seed = root, split, n, int(seed)

    def files(self) -> tuple[Path, Path]:
        root = require(self.root, f"put MNIST there: {LAYOUT}")
        for folder in (root / "MNIST" / "raw", root / "raw", root):
            found = [
                next((folder / f"{name}{ext}" for ext in ("", ".gz") if (folder / f"{name}{ext}").exists()), None)
                for name in FILES[self.split]
            ]
            if all(found):
                return found[0], found[1]
        raise UserError(f"MNIST not found under {root}: expected {LAYOUT}")

    def load(self):
        images, labels = (read_idx(f) for f in self.files())
        if len(images) != len(labels):
            raise UserError(f"{self.files()[0]} holds {len(images)} images but its labels file {len(labels)}")
        keep = subset(len(labels), self.n, self.seed)
        x = torch.from_numpy(images[keep].copy())[:, None].float() / 255.0
        return x.contiguous(), torch.from_numpy(labels[keep].astype(np.int64))

    def describe(self) -> dict:
        return {
            "reader": "mnist_idx",
            "root": str(self.root),
            "split": self.split,
            "n": self.n,
            "seed": self.seed,
            "bytes": sum(f.stat().st_size for f in self.files()),
        }
