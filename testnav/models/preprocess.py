"""A classifier's own input pipeline on [0, 1] images (`Preprocess`): the resize its publisher
evaluates with, then the mean and std. Both the YAML-built classifiers (classifier.py) and the
modules a user hands testnav.Tester (monitor.py's GivenModel) put it in front of the model."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..errors import UserError

INTERPOLATIONS = ("bilinear", "bicubic", "nearest")


class Preprocess(nn.Module):
    """The model's own input pipeline on [0, 1] images: the resize to `input_size`, then mean/std.

    interpolation: the resize filter. uint8: resize the image as the 8-bit tensor the
    publisher's pipeline holds (torchvision's Resize on a uint8 tensor, then ÷255), rather than
    the [0, 1] floats; ehuynh1106/TinyImageNet-Transformers evaluates CaiT-S36 so
    (Resize(384, BICUBIC) on uint8, ÷255, ImageNet mean/std). A clean image is exactly its
    8-bit file, so on D this is the publisher's pipeline bit for bit."""

    def __init__(self, mean, std, input_size=None, interpolation: str = "bilinear", uint8: bool = False):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))
        self.input_size = (
            None
            if input_size is None
            else (input_size, input_size)
            if isinstance(input_size, int)
            else tuple(input_size)
        )
        if interpolation not in INTERPOLATIONS:
            raise UserError(f"benchmark.model.interpolation={interpolation} (valid: {', '.join(INTERPOLATIONS)})")
        self.interpolation, self.uint8 = interpolation, bool(uint8)

    def resize(self, x):
        size = list(self.input_size)
        if self.uint8:
            from torchvision.transforms import InterpolationMode
            from torchvision.transforms import functional as TF

            q = x.mul(255).round_().clamp_(0, 255).to(torch.uint8)
            return TF.resize(q, size, InterpolationMode(self.interpolation), antialias=True).float() / 255.0
        if self.interpolation == "nearest":
            return F.interpolate(x, size=size, mode="nearest")
        return F.interpolate(x, size=size, mode=self.interpolation, antialias=True, align_corners=False)

    def forward(self, x):
        if self.input_size is not None and tuple(x.shape[-2:]) != tuple(self.input_size):
            x = self.resize(x)
        if x.shape[1] == 1 and self.mean.shape[1] == 3:
            x = x.expand(-1, 3, -1, -1)
        return (x - self.mean) / self.std
