"""ImageNet-C / CIFAR-10-C `jpeg_compression` (also the GTSRB "codec error" family).

Follows imagecorruptions / Hendrycks: PIL `save(..., 'JPEG', quality=q)` (4:2:0 chroma
subsampling, Pillow's defaults) and decode. The batch is quantised to uint8 (round to
nearest), encoded and decoded with `torchvision.io.encode_jpeg` / `decode_jpeg` on the CPU:
both wrap the same libjpeg-turbo with the same defaults as Pillow, and the bitstreams and
decoded pixels were checked to be byte-identical to Pillow's (tests), while running 3-4× faster
than a PIL round trip per image. The codec runs on the CPU whatever the input's device, so CPU
and GPU give identical output (nvjpeg would not).

Gray (C = 1) input goes the imagecorruptions way: replicated to RGB, compressed, converted
back with Pillow's `convert('L')` integer formula (R·19595 + G·38470 + B·7471 + 2¹⁵) >> 16.
"""

from __future__ import annotations

import torch
from torchvision.io import decode_jpeg, encode_jpeg

from ..errors import UserError
from . import Family


class JPEG(Family):
    reference = "jpeg_compression"  # imagecorruptions' function this reproduces (tests, bench)
    name = "jpeg"
    param_format = "q {}"

    def apply(self, x, quality, generator):
        b, c, h, w = x.shape
        if c not in (1, 3):
            raise UserError(f"{self.name}: JPEG needs 1 or 3 channels, got {c}")
        u8 = (x.detach().to("cpu", torch.float32) * 255.0).round().clamp(0, 255).to(torch.uint8)
        if c == 1:
            u8 = u8.expand(b, 3, h, w)
        encoded = encode_jpeg(list(u8.contiguous()), quality=int(quality))
        out = torch.stack(decode_jpeg(encoded))
        if c == 1:
            o = out.to(torch.int32)
            out = ((o[:, 0] * 19595 + o[:, 1] * 38470 + o[:, 2] * 7471 + 0x8000) >> 16)[:, None]
        return (out.to(torch.float32) / 255.0).to(device=x.device, dtype=x.dtype)
