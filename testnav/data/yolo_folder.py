"""Roboflow's YOLO export: root/images/<stem>.jpg|png and root/labels/<stem>.txt.

Each label line is `class cx cy w h`, normalised to [0, 1] by the image's width and height
(YOLO darknet format; an image without objects has an empty or no label file, as YOLO
treats it). Images stay at their own size (`image_size: null`, the default: the detector's own
preprocessing, e.g. ultralytics' letterbox, takes them from there) or are resized to
`image_size` (an int: square; or [H, W]); the boxes are returned as (K, 5) float arrays
(class, x1, y1, x2, y2) in pixels of the images as returned.
`split` selects a sub-folder of a full Roboflow export (train/valid/test); `n` keeps a fixed
seeded subset (in file order) of the images.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import UserError
from . import open_image, subset, to_tensor

EXTENSIONS = {".png", ".jpg", ".jpeg", ".bmp", ".webp"}
LAYOUT = "root/images/<name>.jpg|png with root/labels/<name>.txt ('class cx cy w h' per box, normalised)"


def read_labels(path: Path, width: float, height: float) -> np.ndarray:
    """One YOLO label file → (K, 5) (class, x1, y1, x2, y2) in pixels of a width × height image."""
    rows = []
    if path.exists():
        for ln, line in enumerate(path.read_text().splitlines(), 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 5:
                raise UserError(
                    f"{path}:{ln}: expected 'class cx cy w h' (5 numbers), got {len(parts)} "
                    f"(polygon labels are not supported: export boxes in YOLO format)"
                )
            c, cx, cy, bw, bh = (float(v) for v in parts)
            rows.append(
                (c, (cx - bw / 2) * width, (cy - bh / 2) * height, (cx + bw / 2) * width, (cy + bh / 2) * height)
            )
    return np.asarray(rows, dtype=np.float64).reshape(-1, 5)


class YoloFolder:
    def __init__(self, root: str, split: str | None = None, n: int | None = None, seed: int = 0, image_size=None):
        self.root, self.split, self.n, self.seed, self.image_size = root, split, n, int(seed), image_size

    @property
    def folder(self) -> Path:
        p = Path(str(self.root)).expanduser()
        return p / self.split if self.split else p

    def files(self) -> list[Path]:
        folder = self.folder
        if not (folder / "images").is_dir() or not (folder / "labels").is_dir():
            raise UserError(
                f"{folder} holds no images/ and labels/ folders: put a Roboflow YOLO export there "
                f"({LAYOUT}) or set ROBOFLOW_ROOT / benchmark.data.root"
            )
        images = sorted(f for f in (folder / "images").iterdir() if f.suffix.lower() in EXTENSIONS)
        if not images:
            raise UserError(
                f"{folder / 'images'} holds no .jpg/.png images: put a Roboflow YOLO export there ({LAYOUT})"
            )
        return images

    def load(self):
        """(images (N, 3, H, W) in [0, 1], [per-image (K, 5) boxes in pixels of those images])."""
        files = self.files()
        keep = subset(len(files), self.n, self.seed)
        images, boxes = [], []
        for i in keep:
            im = open_image(files[i])
            w, h = (im.width, im.height) if self.image_size is None else self.size()[::-1]
            images.append(im)
            boxes.append(read_labels(self.folder / "labels" / f"{files[i].stem}.txt", w, h))
        return to_tensor(images, None if self.image_size is None else list(self.size())), boxes

    def size(self) -> tuple[int, int]:
        s = self.image_size
        return (int(s), int(s)) if isinstance(s, int) else (int(s[0]), int(s[1]))

    def describe(self) -> dict:
        files = self.files()
        labels = [self.folder / "labels" / f"{f.stem}.txt" for f in files]
        return {
            "reader": "yolo_folder",
            "root": str(self.folder),
            "files": len(files),
            "n": self.n,
            "seed": self.seed,
            "image_size": None if self.image_size is None else list(self.size()),
            "bytes": sum(f.stat().st_size for f in files) + sum(p.stat().st_size for p in labels if p.exists()),
        }
