"""Convolution, ReLU and 2 × 2 max pooling in float64 as one compiled loop, for the coverage signals' pass.

The coverage signals bin a model's monitored layers recomputed in float64 (`monitor.float64_twin`).
torch has no oneDNN kernels for float64 convolutions; its fallback unfolds each image and
multiplies matrices whose inner dimension is the taps per output (in_channels × kh × kw). For a
first convolution on gray or RGB images that dimension is tiny (LeNet-5: 25), the product cannot
pay for the unfolding, and this one layer cost about as much as the model's whole float32
forward. `fuse` replaces such Conv2d → ReLU → MaxPool2d(2) runs in a float64 twin's
`nn.Sequential` blocks with `ConvReluPool`: the three in one numba loop per image, in cache.
Convolutions with more taps keep torch's (the matrix product wins there; `make bench`), and their
ReLU and pool become one `ReluPool`.

Every output of the loop is bias + Σ over (input channel, kernel row, kernel column) in that
order, one product at a time without contraction: the same bits on every CPU (the order depends
neither on the instruction set nor on a BLAS's blocking), within float64 rounding (≈ 1e-16) of
torch's convolution.
"""

from __future__ import annotations

import numba
import numpy as np
import torch
from numba import njit, prange
from torch import nn

DIRECT_TAPS = 64  # fused where in_channels × kh × kw is at most this (see `fusable`)


@njit(nogil=True, cache=True, error_model="numpy", parallel=True)
def _direct(x, w, b, pad, out):
    """Image by image: for each output channel, the kernel's taps in order, each over whole rows."""
    n, c_in, h, wd = x.shape
    c_out, _, kh, kw = w.shape
    ho, wo = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    for i in prange(n):
        xp = np.zeros((c_in, h + 2 * pad, wd + 2 * pad))
        xp[:, pad : pad + h, pad : pad + wd] = x[i]
        acc = np.empty((c_out, ho, wo))
        for o in range(c_out):
            acc[o] = b[o]
            for c in range(c_in):
                for ky in range(kh):
                    for kx in range(kw):
                        wv = w[o, c, ky, kx]
                        for y in range(ho):
                            row, dst = xp[c, y + ky], acc[o, y]
                            for j in range(wo):
                                dst[j] += wv * row[j + kx]
        for o in range(c_out):  # ReLU of the 2 × 2 maxima
            for y in range(ho // 2):
                for j in range(wo // 2):
                    v = max(
                        acc[o, 2 * y, 2 * j],
                        acc[o, 2 * y, 2 * j + 1],
                        acc[o, 2 * y + 1, 2 * j],
                        acc[o, 2 * y + 1, 2 * j + 1],
                    )
                    out[i, o, y, j] = v if v > 0.0 else 0.0
    return out


class ConvReluPool(nn.Module):
    """conv → ReLU → 2 × 2 max pool in float64, one compiled loop per image on the CPU (the
    original modules elsewhere)."""

    def __init__(self, conv: nn.Conv2d, relu: nn.Module, pool: nn.Module):
        super().__init__()
        self.original = nn.Sequential(conv, relu, pool)
        weight = conv.weight.detach().double()
        bias = conv.bias.detach().double() if conv.bias is not None else weight.new_zeros(len(weight))
        self.pad = int(conv.padding[0])
        self.weight, self.bias = weight.contiguous().numpy(), bias.contiguous().numpy()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type != "cpu" or x.dtype != torch.float64 or x.dim() != 4:
            return self.original(x)
        kh, kw = self.weight.shape[2:]
        ho, wo = x.shape[2] + 2 * self.pad - kh + 1, x.shape[3] + 2 * self.pad - kw + 1
        out = torch.empty((len(x), len(self.bias), ho // 2, wo // 2), dtype=torch.float64)
        threads = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, torch.get_num_threads())))
        try:
            _direct(x.contiguous().numpy(), self.weight, self.bias, self.pad, out.numpy())
        finally:
            numba.set_num_threads(threads)
        return out


def fusable(conv: nn.Module, relu: nn.Module, pool: nn.Module) -> bool:
    """A plain convolution (stride 1, no dilation or groups, zero padding the same on every side)
    with few taps per output (in_channels × kh × kw ≤ DIRECT_TAPS), a ReLU and a 2 × 2 max pool of
    stride 2. With more taps torch's own float64 convolution (each image unfolded, then a matrix
    product with that inner dimension) is the faster one."""
    return (
        type(conv) is nn.Conv2d
        and conv.in_channels * conv.kernel_size[0] * conv.kernel_size[1] <= DIRECT_TAPS
        and conv.stride == (1, 1)
        and conv.dilation == (1, 1)
        and conv.groups == 1
        and conv.padding_mode == "zeros"
        and isinstance(conv.padding, tuple)
        and conv.padding[0] == conv.padding[1]
        and relu_pool(relu, pool)
    )


def relu_pool(relu: nn.Module, pool: nn.Module) -> bool:
    """A ReLU, then a plain 2 × 2 max pool of stride 2 (no padding, dilation or ceil mode)."""
    return (
        type(relu) is nn.ReLU
        and type(pool) is nn.MaxPool2d
        and pool.kernel_size in (2, (2, 2))
        and pool.stride in (2, (2, 2))
        and pool.padding in (0, (0, 0))
        and pool.dilation in (1, (1, 1))
        and not pool.ceil_mode
        and not pool.return_indices
    )


class ReluPool(nn.Module):
    """ReLU, then a 2 × 2 max pool, as the elementwise maximum of the four strided quarters and a
    clamp at 0 (the same values: max commutes with ReLU, and both propagate NaN), in three
    elementwise passes, faster than torch's float64 `max_pool2d` (CHANGELOG.md)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x[..., : x.shape[-2] // 2 * 2, : x.shape[-1] // 2 * 2]
        top = torch.maximum(x[..., 0::2, 0::2], x[..., 0::2, 1::2])
        return torch.maximum(top, torch.maximum(x[..., 1::2, 0::2], x[..., 1::2, 1::2]), out=top).clamp_min_(0.0)


def fuse(model: nn.Module) -> nn.Module:
    """Replace every fusable Conv2d → ReLU → MaxPool2d run inside the `nn.Sequential` blocks of
    `model` (a float64 copy, changed in place) with a `ConvReluPool`, and every other ReLU →
    MaxPool2d(2) pair with a `ReluPool`; returns `model`."""
    for block in [m for m in model.modules() if type(m) is nn.Sequential]:
        layers, i, changed = list(block), 0, False
        while i + 1 < len(layers):
            if i + 2 < len(layers) and fusable(*layers[i : i + 3]):
                layers[i : i + 3] = [ConvReluPool(*layers[i : i + 3])]
                changed = True
            elif relu_pool(*layers[i : i + 2]):
                layers[i : i + 2] = [ReluPool()]
                changed = True
            i += 1
        if changed:
            for name in list(block._modules):
                del block._modules[name]
            for j, layer in enumerate(layers):
                block.add_module(str(j), layer)
    return model
