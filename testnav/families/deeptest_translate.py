"""DeepTest "translation" (Tian et al. 2018; TestifAI's Udacity/roboflow benchmark).

DeepTest shifts the frame by (tx, ty) pixels right and down with `cv2.warpAffine([[1, 0, tx],
[0, 1, ty]])`: bilinear, border constant 0, output size unchanged. Parameters per level are
(tx, ty) in pixels of the frame DeepTest worked on; the TestifAI levels are (20, 20) … (100,
100) on 640 × 480 Udacity frames. If the tensors are a resized frame, pass `frame_size:
[W0, H0]` (the size the pixel offsets refer to) and the shift is rescaled to W/W0, H/H0 so the
same fraction of the picture moves; without it offsets are in the tensor's own pixels.
Integer shifts are exact (0/1 weights); fractional ones are bilinear like OpenCV's (OpenCV
quantises the fraction to 1/32 px; we do not).
"""

from __future__ import annotations

from . import Family
from .boxes import affine_boxes, as_boxes
from .resample import separable, translate_matrix


class DeepTestTranslate(Family):
    moves_content = True  # objects move: detection boxes must be mapped with them
    name = "translation"
    param_format = "{}, {} px"

    def __init__(self, params, name: str | None = None, frame_size=None):
        super().__init__(params, name)
        self.frame_size = tuple(frame_size) if frame_size is not None else None

    def shift(self, param, h: int, w: int) -> tuple[float, float]:
        tx, ty = (float(v) for v in param) if isinstance(param, tuple) else (float(param), float(param))
        if self.frame_size is not None:
            tx, ty = tx * w / self.frame_size[0], ty * h / self.frame_size[1]
        return tx, ty

    def apply(self, x, param, generator):
        h, w = x.shape[-2:]
        tx, ty = self.shift(param, h, w)
        return separable(x, translate_matrix(h, ty), translate_matrix(w, tx)).clamp(0.0, 1.0)

    def map_boxes(self, boxes, level: int, size, min_size: float = 1.0):
        """Boxes (class, x1, y1, x2, y2) of an (H, W) image after this family at `level`:
        shifted by (tx, ty), clipped to the frame, dropped once they leave it (testnav.families.boxes)."""
        if level == 0:
            return as_boxes(boxes)
        h, w = size
        tx, ty = self.shift(self.params[level - 1], h, w)
        return affine_boxes(boxes, size, 1.0, tx, 1.0, ty, min_size)

    def describe(self) -> dict:
        return {**super().describe(), "frame_size": self.frame_size}
