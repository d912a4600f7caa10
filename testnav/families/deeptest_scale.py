"""DeepTest "scale" as a fixed-size zoom: enlarge by s with bicubic interpolation, centre crop.

DeepTest calls `cv2.resize(img, None, fx=s, fy=s, interpolation=INTER_CUBIC)` and keeps the
*larger* image; only its model's preprocessing (crop rows ≥ 200, resize) makes that a change
of content. A tensor family must keep H × W, so we take the documented reimplementation
choice (perturbations.md §D): resize by (sx, sy) exactly as cv2 does (half-pixel centres,
Keys cubic a = −0.75, replicated border) and crop the centre H × W back, i.e. zoom in by s
about the centre. Saturated to [0, 1] like OpenCV's uint8 output. TestifAI levels:
(1.5, 1.5), (2.6, 2.6), (3.7, 3.7), (4.8, 4.8), (6.0, 6.0). A scalar parameter means sx = sy.
"""

from __future__ import annotations

from . import Family
from .boxes import affine_boxes, as_boxes
from .resample import cv2_cubic_zoom_matrix, separable


class DeepTestScale(Family):
    moves_content = True  # objects move: detection boxes must be mapped with them
    name = "scale"
    param_format = "×{}, ×{}"

    def apply(self, x, param, generator):
        sx, sy = (float(v) for v in param) if isinstance(param, tuple) else (float(param), float(param))
        h, w = x.shape[-2:]
        return separable(x, cv2_cubic_zoom_matrix(h, sy), cv2_cubic_zoom_matrix(w, sx)).clamp(0.0, 1.0)

    def map_boxes(self, boxes, level: int, size, min_size: float = 1.0):
        """Boxes (class, x1, y1, x2, y2) of an (H, W) image after this family at `level`: the
        zoom's own coordinate map u → u·s − off (off = (round(n·s) − n)//2 per axis, as in
        `cv2_cubic_zoom_matrix`), clipped to the frame, dropped once they leave it."""
        if level == 0:
            return as_boxes(boxes)
        param = self.params[level - 1]
        sx, sy = (float(v) for v in param) if isinstance(param, tuple) else (float(param), float(param))
        h, w = size
        offx, offy = (int(round(w * sx)) - w) // 2, (int(round(h * sy)) - h) // 2
        return affine_boxes(boxes, size, sx, -offx, sy, -offy, min_size)
