"""DeepTest "contrast": a gain α on every channel with uint8 saturation, clip(x·α, 0, 1).

DeepTest computes `cv2.multiply(img, np.array([α]))`. OpenCV changed what that call does with
a 1-element array in 4.9 (newer versions scale channel 0 and zero channels 1–2); DeepTest's
2017 OpenCV scaled all channels, so we implement the intended numpy form clip(round(x·α)) in
float (no rounding: the family keeps float precision, within 0.5/255 of the uint8 result).
Unlike ImageNet-C `contrast`, this is a gain about 0, not about the mean. TestifAI levels:
α = 1.2, 1.6, 2.1, 2.5, 3.0 (≈ linspace(1.2, 3.0, 5) truncated to one decimal).
"""

from __future__ import annotations

from . import Family


class DeepTestContrast(Family):
    name = "contrast"
    param_format = "×{}"

    def apply(self, x, alpha, generator):
        return (x * float(alpha)).clamp(0.0, 1.0)
