"""Where geometric families move objects: box maps for detection ground truth.

Boxes are an (K, 5) float array of (class, x1, y1, x2, y2) in pixel-edge coordinates of the
(H, W) image (pixel i spans [i, i + 1]). A family that moves content exposes
`map_boxes(boxes, level, size)` returning the boxes of the transformed image: the corners are
mapped by the same transformation as the pixels, then clipped to the image; a box whose
clipped width or height falls below `min_size` pixels has left the image and is dropped.
"""

from __future__ import annotations

import numpy as np


def as_boxes(boxes) -> np.ndarray:
    b = np.asarray(boxes, dtype=np.float64)
    return b.reshape(-1, 5)


def clip_boxes(boxes: np.ndarray, size, min_size: float = 1.0) -> np.ndarray:
    """Clip (class, x1, y1, x2, y2) boxes to an (H, W) image and drop those narrower or
    shorter than `min_size` pixels after clipping."""
    h, w = size
    b = as_boxes(boxes).copy()
    b[:, [1, 3]] = b[:, [1, 3]].clip(0.0, w)
    b[:, [2, 4]] = b[:, [2, 4]].clip(0.0, h)
    keep = (b[:, 3] - b[:, 1] >= min_size) & (b[:, 4] - b[:, 2] >= min_size)
    return b[keep]


def affine_boxes(boxes: np.ndarray, size, ax: float, bx: float, ay: float, by: float, min_size: float = 1.0):
    """x → ax·x + bx, y → ay·y + by on the corners (axis-aligned maps with ax, ay > 0), then clip."""
    b = as_boxes(boxes).copy()
    b[:, [1, 3]] = b[:, [1, 3]] * ax + bx
    b[:, [2, 4]] = b[:, [2, 4]] * ay + by
    return clip_boxes(b, size, min_size)
