"""An image folder: root/<class name>/<image>, classes in sorted order (torchvision's ImageFolder)."""

from __future__ import annotations

from . import open_image, require, subset, to_tensor

EXTENSIONS = {".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".webp", ".tif", ".tiff"}


class ImageFolder:
    def __init__(self, root: str, n: int | None = None, seed: int = 0, image_size=None):
        self.root, self.n, self.seed, self.image_size = root, n, int(seed), image_size

    def files(self):
        if self.root is None:
            from ..errors import UserError

            raise UserError("benchmark.data.root is not set: give your image folder (root/<class>/<image>)")
        root = require(self.root, "give an image folder with one sub-folder per class (root/<class>/<image>)")
        classes = sorted(p.name for p in root.iterdir() if p.is_dir())
        items = [
            (f, i)
            for i, c in enumerate(classes)
            for f in sorted((root / c).iterdir())
            if f.suffix.lower() in EXTENSIONS
        ]
        if not items:
            from ..errors import UserError

            raise UserError(f"{root} holds no images in class sub-folders (root/<class>/<image>.png|jpg|…)")
        return items

    def load(self):
        import torch

        items = self.files()
        keep = subset(len(items), self.n, self.seed)
        images = [open_image(items[i][0]) for i in keep]
        return to_tensor(images, self.image_size), torch.tensor([items[i][1] for i in keep])

    def describe(self) -> dict:
        items = self.files()
        return {
            "reader": "image_folder",
            "root": str(self.root),
            "files": len(items),
            "n": self.n,
            "seed": self.seed,
            "image_size": self.image_size,
            "bytes": sum(f.stat().st_size for f, _ in items),
        }
