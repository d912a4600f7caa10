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

Fast path (c ≥ ½, every 32/64 px table entry): each small pixel is the mean of one or two
input pixels along an axis, so the 2-D mean is ((a + b) + (c + d)) · ¼ with a single pixel
counted twice. Scaling by a power of two is exact, so this is bit-identical to the weighted taps
(a·½ + b·½ per axis) of the general path, which handles wider footprints. The row pairs are
whole-row copies (`index_select` on rows: cheap), summed into the first half of one buffer whose
second half holds each sum plus its right neighbour; one gather from it, directly at the W output
columns (composed with the upsampling index: one gather along the last axis, the slow one,
instead of two), then ½ (one pixel, counted twice) or ¼ (two pixels) per column, and the
upsampling of rows is a last row copy.

On the CPU the column step is a matrix product instead where it can be a small one: the column
operator (row-pair sums → output columns, weights ½ and ¼) repeats every W / gcd(W, w) columns,
so where that period divides 16 or 32 it is block-diagonal and one (·, q) @ (q, q) product, q = 16
or 32, applies it: q multiply-adds per value, faster than the neighbour sum, gather and scaling
it replaces (docs/families.md). Still bit-identical: each output has one or two
non-zero products, a·½ or a·¼ + b·¼, whose sum rounds as (a + b)·¼ in any order, and the zero
products add exactly. Periods of 64 (64 px, c = 0.9 and 0.8) keep the gather (a 64-wide product
is slower), and so does every other device, where a caller's TF32 setting would round the
product's inputs. Where the rows' operator repeats the same way (square images: the same
period), the row pairs' sums and the upsampling of rows are one product too, from the left: a
(q, q) block of 0, 1 and 2 (one pixel counted twice) that writes each upsampled row as a + b
directly, the same single rounding as the row copies and their sum. The columns' product then
runs over all H rows instead of the small ones, still cheaper than the two row gathers, their sum
and the last row copy it replaces (`make bench`).
"""

from __future__ import annotations

from functools import lru_cache

import torch

from ..errors import UserError
from . import Family
from .resample import apply_taps, pil_box_matrix, pil_nearest_index, sparse_taps, take


@lru_cache(maxsize=256)
def box_pairs(n_in: int, n_out: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Pillow BOX n_in → n_out as (first, second) input indices per output pixel when every
    footprint holds one or two pixels (a single pixel repeated), else None."""
    index, weight = sparse_taps(pil_box_matrix(n_in, n_out))
    if len(index) > 2 or not bool(((weight == 1) | (weight == 0.5) | (weight == 0)).all()):
        return None
    if len(index) == 1:
        return index[0], index[0]
    return index[0], torch.where(weight[1] != 0, index[1], index[0])


@lru_cache(maxsize=256)
def up_index(upsample: str, n_small: int, n: int) -> torch.Tensor:
    if upsample == "box":  # one-hot rows: the source pixel under each output centre
        return pil_box_matrix(n_small, n).argmax(1)
    return pil_nearest_index(n_small, n)


@lru_cache(maxsize=256)
def composed_pair_index(upsample: str, n: int, n_small: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """box_pairs(n, n_small) read at each of the n upsampled positions, as one index into
    [x_0 … x_{n−1}, x_0 + x_1 … x_{n−2} + x_{n−1}] (a footprint holds one pixel or two
    adjacent ones) and the factor of each (½ for one pixel, counted twice in the ¼ mean; ¼ for
    two), or None when the footprints are wider."""
    pairs = box_pairs(n, n_small)
    if pairs is None:
        return None
    first, second = (i[up_index(upsample, n_small, n)] for i in pairs)
    if not bool(((second == first) | (second == first + 1)).all()):
        return None
    single = second == first
    return torch.where(single, first, n + first), torch.where(single, 0.5, 0.25).float()


def periodic_block(m: torch.Tensor) -> torch.Tensor | None:
    """The (q, q) diagonal block of the (n, n) matrix m when m is block-diagonal with that block
    repeated, q = 16 or 32; else None."""
    n = len(m)
    for q in (16, 32):
        if n % q == 0 and torch.equal(m, torch.block_diag(*[m[:q, :q]] * (n // q))):
            return m[:q, :q].contiguous()
    return None


@lru_cache(maxsize=256)
def column_block(upsample: str, n: int, n_small: int) -> torch.Tensor | None:
    """The fast path's column operator as the (q, q) diagonal block of its block-diagonal
    (n, n) matrix (row-summed columns × output columns), q = 16 or 32; None when the operator
    is not composed of pairs or does not repeat with such a period."""
    composed = composed_pair_index(upsample, n, n_small)
    if composed is None:
        return None
    index, factor = composed
    single = index < n
    first = torch.where(single, index, index - n)
    m = torch.zeros(n, n)
    out = torch.arange(n)
    m[first, out] += factor  # one pixel: ½; two: ¼ each
    m[(first + 1).clamp_max(n - 1), out] += torch.where(single, 0.0, 0.25)
    return periodic_block(m)


@lru_cache(maxsize=256)
def row_block(upsample: str, n: int, n_small: int) -> torch.Tensor | None:
    """The row pairs' sums read at the n upsampled rows, as the (q, q) diagonal block of an
    (n, n) matrix of 0, 1 and 2 (one pixel counted twice) applied from the left; None when the
    footprints are wider or the operator does not repeat with period 16 or 32."""
    pairs = box_pairs(n, n_small)
    if pairs is None:
        return None
    up, out = up_index(upsample, n_small, n), torch.arange(n)
    m = torch.zeros(n, n)
    m[out, pairs[0][up]] += 1.0
    m[out, pairs[1][up]] += 1.0
    return periodic_block(m)


class Pixelate(Family):
    reference = "pixelate"  # imagecorruptions' function this reproduces (tests, bench)
    name = "pixelate"
    param_format = "×{}"
    writes_out = True

    def __init__(self, params, name: str | None = None, upsample: str = "box"):
        super().__init__(params, name)
        if upsample not in ("box", "nearest"):
            raise UserError(f"pixelate: upsample must be 'box' or 'nearest', not {upsample!r}")
        self.upsample = upsample

    def _up_index(self, n_small: int, n: int) -> torch.Tensor:
        return up_index(self.upsample, n_small, n)

    def apply(self, x, c, generator, out=None):
        h, w = x.shape[-2:]
        sh, sw = int(h * float(c)), int(w * float(c))  # Python int() truncation, as the reference
        rows, cols = box_pairs(h, sh), composed_pair_index(self.upsample, w, sw)
        if rows is not None and cols is not None:
            block = column_block(self.upsample, w, sw) if x.device.type == "cpu" else None
            lead = row_block(self.upsample, h, sh) if block is not None else None
            if lead is not None:  # rows summed and upsampled in one product, then the columns
                q, shape = len(lead), x.shape
                up = torch.matmul(lead.to(x.dtype), x.reshape(*shape[:-2], h // q, q, w))
                cols = out.view(-1, len(block)) if out is not None else None
                return torch.matmul(up.view(-1, len(block)), block.to(x.dtype), out=cols).view(shape)
            if block is not None:
                pairs = take(x, 2, rows[0]).add_(take(x, 2, rows[1]))
                small = (pairs.view(-1, len(block)) @ block.to(x.dtype)).view(pairs.shape)
            else:
                (r0, r1), (index, factor) = (t.to(x.device) for t in rows), cols
                both = x.new_empty((*x.shape[:2], sh, 2 * w - 1))  # [row pair sums | + their column neighbour]
                pairs = torch.index_select(x, 2, r0, out=both[..., :w]).add_(x.index_select(2, r1))
                torch.add(pairs[..., :-1], pairs[..., 1:], out=both[..., w:])
                # one gather of the column pairs, then ½ or ¼; no clip: a mean of values in [0, 1]
                # with power-of-two weights stays in [0, 1] exactly
                small = take(both, 3, index).mul_(factor.to(x.device))
        else:  # Pillow's box rows have ⌈1/c⌉ + 1 non-zeros at most: a few gathered taps per axis
            small = apply_taps(apply_taps(x, 2, pil_box_matrix(h, sh)), 3, pil_box_matrix(w, sw)).clamp_(0.0, 1.0)
            # upsampling picks one source pixel per output pixel, so clamping before it is the same
            small = take(small, 3, self._up_index(sw, w))
        return take(small, 2, self._up_index(sh, h), out=out)

    def describe(self) -> dict:
        return {**super().describe(), "upsample": self.upsample}
