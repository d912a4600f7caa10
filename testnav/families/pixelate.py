"""ImageNet-C / CIFAR-10-C `pixelate`: shrink with PIL BOX to int(W·c) × int(H·c), enlarge back.

Downsampling reproduces Pillow's `Image.BOX` arithmetic exactly (`resample.pil_box_matrix`).
Note that Pillow's BOX is *not* area averaging: each small pixel is the plain mean of the
input pixels whose centres lie inside its footprint (a pixel straddling the footprint edge
counts fully or not at all). On float ('F') images this matches Pillow to float32 rounding
(≈ 5e-8); on uint8 RGB images Pillow rounds to uint8 after its horizontal pass and again after
the vertical one, so the reference differs from this float family by ≤ 1/255.

Upsampling back to H × W: Hendrycks' `make_*_c.py` use `Image.BOX`, imagecorruptions uses
`Image.NEAREST`. Both pick one source pixel per output pixel; for every (size, c) pair in the
ImageNet / Tiny-ImageNet / CIFAR-10 tables they pick the same one (checked in tests), but on
other sizes NEAREST's accumulated double-precision coordinate can round the other way at exact
ties. `upsample="box"` (default, the published datasets) or `"nearest"` (imagecorruptions)
selects which is reproduced exactly.
"""

from __future__ import annotations

from ..errors import UserError
from . import Family
from .resample import apply_taps, pil_box_matrix, pil_nearest_index, take


class Pixelate(Family):
    name = "pixelate"

    def __init__(self, params, name: str | None = None, upsample: str = "box"):
        super().__init__(params, name)
        if upsample not in ("box", "nearest"):
            raise UserError(f"pixelate: upsample must be 'box' or 'nearest', not {upsample!r}")
        self.upsample = upsample

    def apply(self, x, c, generator):
        h, w = x.shape[-2:]
        sh, sw = int(h * float(c)), int(w * float(c))  # Python int() truncation, as the reference
        # Pillow's box rows have ⌈1/c⌉ + 1 non-zeros at most: a few gathered taps per axis
        small = apply_taps(apply_taps(x, 2, pil_box_matrix(h, sh)), 3, pil_box_matrix(w, sw))
        if self.upsample == "box":  # one-hot rows: a pure gather
            out = apply_taps(apply_taps(small, 2, pil_box_matrix(sh, h)), 3, pil_box_matrix(sw, w))
        else:
            rows = pil_nearest_index(sh, h).to(x.device)
            cols = pil_nearest_index(sw, w).to(x.device)
            out = take(take(small, 2, rows), 3, cols)
        return out.clamp(0.0, 1.0)

    def describe(self) -> dict:
        return {**super().describe(), "upsample": self.upsample}
