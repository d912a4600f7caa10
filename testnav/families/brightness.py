"""Brightness (ImageNet-C / MNIST-C): add c to the HSV value channel, clip to [0, 1]."""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from . import Family

FLT_MIN = float(torch.finfo(torch.float32).tiny)


@njit(nogil=True, cache=True, error_model="numpy")
def _brightness(x, c, out):
    """`Brightness.apply`'s float32 steps on (B, C, H·W) arrays into out, image by image: V, then
    the per-pixel ratio and offset, then each channel (compiled without contraction, so every
    multiply and add rounds as torch's separate passes do; each loop is a plain vector loop)."""
    n, channels, m = x.shape
    zero, one, tiny = np.float32(0.0), np.float32(1.0), np.float32(FLT_MIN)
    v = np.empty(m, np.float32)
    ratio = np.empty(m, np.float32)
    offset = np.empty(m, np.float32)
    for b in range(n):
        v[:] = x[b, 0]
        for k in range(1, channels):
            xk = x[b, k]
            for p in range(m):
                v[p] = v[p] if v[p] >= xk[p] else xk[p]
        for p in range(m):
            lit = one if v[p] > zero else (-one if v[p] < zero else zero)  # torch.sign
            v_new = v[p] + c
            v_new = v_new if v_new > zero else zero
            v_new = v_new if v_new < one else one
            ratio[p] = v_new / (v[p] if v[p] > tiny else tiny)
            offset[p] = v_new - v_new * lit
        for k in range(channels):
            xk, ok = x[b, k], out[b, k]
            for p in range(m):
                y = offset[p] + xk[p] * ratio[p]
                y = y if y > zero else zero
                ok[p] = y if y < one else one
    return out


class Brightness(Family):
    """HSV round trip in closed form: with hue and saturation fixed every RGB channel is
    proportional to V, so the result is x · V'/V (and V' itself where V ≤ 0, where HSV
    saturation is 0). On one gray channel this is clip(x + c, 0, 1), exactly MNIST-C.

    One pass over the batch: both cases are offset + x · ratio with per-pixel (B, 1, H, W)
    offset and ratio (0 and V'/V, or V' and 0), which rounds exactly as x · (V'/V) alone.
    The per-pixel work avoids boolean masks (a comparison and a bool × float product cost 3–4×
    an arithmetic pass here): where V = 0, x = 0 in every channel, so dividing by
    max(V, FLT_MIN) instead of V leaves x · ratio = 0 there, and offset = V' − V'·sign(V).

    On the CPU, for float32 images, the same steps run as one compiled loop per image
    (`_brightness`) instead of eight tensor passes over the block, reading and writing each value
    once: the same bits (tested against the tensor code)."""

    reference = "brightness"  # imagecorruptions' function this reproduces (tests, bench)

    name = "brightness"
    param_format = "+{}"
    writes_out = True

    def apply(self, x, c, generator, out=None):
        compiled = x.device.type == "cpu" and x.dtype == torch.float32 and x.dim() == 4 and x.is_contiguous()
        if compiled and (out is None or out.is_contiguous()):
            out = torch.empty_like(x) if out is None else out
            flat = (len(x), x.shape[1], -1)
            _brightness(x.view(flat).numpy(), np.float32(c), out.view(flat).numpy())
            return out
        return self.tensor_apply(x, c, out)

    @staticmethod
    def tensor_apply(x, c, out=None):
        """The steps as tensor passes: every device and dtype."""
        v = x.amax(dim=1, keepdim=True)
        v_new = (v + float(c)).clamp_(0.0, 1.0)
        lit = torch.sign(v)  # 1 where V > 0, 0 where V = 0
        ratio = v_new / v.clamp_min_(FLT_MIN)  # V'/V where lit; finite (≤ 1/FLT_MIN) and times x = 0 where dark
        offset = torch.addcmul(v_new, v_new, lit, value=-1.0)  # V' where dark, else exactly 0
        return torch.addcmul(offset, x, ratio, out=out).clamp_(0.0, 1.0)
