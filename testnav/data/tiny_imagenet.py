"""Tiny-ImageNet's validation split as distributed: root/wnids.txt, root/val/val_annotations.txt
and root/val/images/*.JPEG (64×64). Class indices follow the sorted wnids, the convention of
torchvision's ImageFolder over root/train, which is how Tiny-ImageNet classifiers are trained."""

from __future__ import annotations

import torch

from . import open_image, require, subset, to_tensor


class TinyImageNetVal:
    def __init__(self, root: str, n: int | None = None, seed: int = 0, image_size=None):
        self.root, self.n, self.seed, self.image_size = root, n, int(seed), image_size

    def items(self):
        root = require(
            self.root, "give the unpacked tiny-imagenet-200 folder (wnids.txt, val/val_annotations.txt, val/images/)"
        )
        wnids = sorted(
            require(root / "wnids.txt", "Tiny-ImageNet's wnids.txt (one WordNet id per line)").read_text().split()
        )
        index = {w: i for i, w in enumerate(wnids)}
        ann = require(root / "val" / "val_annotations.txt", "Tiny-ImageNet's val/val_annotations.txt")
        rows = [line.split("\t")[:2] for line in ann.read_text().splitlines() if line.strip()]
        return [(root / "val" / "images" / f, index[w]) for f, w in sorted(rows)]

    def load(self):
        items = self.items()
        keep = subset(len(items), self.n, self.seed)
        images = [open_image(require(items[i][0], "an image listed in val_annotations.txt")) for i in keep]
        return to_tensor(images, self.image_size), torch.tensor([items[i][1] for i in keep])

    def describe(self) -> dict:
        return {
            "reader": "tiny_imagenet_val",
            "root": str(self.root),
            "n": self.n,
            "seed": self.seed,
            "files": len(self.items()),
            "image_size": self.image_size,
        }


class TinyImageNetTrain(TinyImageNetVal):
    """Tiny-ImageNet's training split (root/train/<wnid>/images/*.JPEG): a fixed random subset
    calibrates the input-level signals (coverage ranges, KDEs)."""

    def items(self):
        root = require(self.root, "give the unpacked tiny-imagenet-200 folder (wnids.txt, train/<wnid>/images/)")
        wnids = sorted(require(root / "wnids.txt", "Tiny-ImageNet's wnids.txt").read_text().split())
        return [(f, i) for i, w in enumerate(wnids) for f in sorted((root / "train" / w / "images").glob("*.JPEG"))]

    def describe(self) -> dict:
        return {**super().describe(), "reader": "tiny_imagenet_train"}
