"""DeepTest "brightness": add β (in 0..255 units) to every channel with saturation.

DeepTest's Epoch script does `cv2.add(channel, β)` per BGR channel (Chauffeur/Rambo's
`cv2.add(img, β)` hit only the blue channel in OpenCV < 4.9); the intended, version-proof form
is numpy's clip(x + β, 0, 255) on all channels, which is what this family computes on [0, 1]
floats: clip(x + β/255, 0, 1). Parameters stay in DeepTest's units; TestifAI levels β = 20,
40, 60, 80, 100. Unlike ImageNet-C `brightness` this is not an HSV value shift: hue and
saturation change as channels saturate.
"""

from __future__ import annotations

from . import Family


class DeepTestBrightness(Family):
    name = "brightness"
    param_format = "+{}"

    def apply(self, x, beta, generator):
        return (x + float(beta) / 255.0).clamp(0.0, 1.0)
