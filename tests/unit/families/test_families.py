import math

import numpy as np
import pytest
import torch
from skimage.color import hsv2rgb, rgb2hsv
from skimage.transform import AffineTransform, warp

from testnav.errors import UserError
from testnav.families import uniform
from testnav.families.brightness import Brightness
from testnav.families.motion_blur import MotionBlur
from testnav.families.scale import Scale
from testnav.families.shear import Shear
from testnav.fidelity.ssim import ssim_per_image

FAMILIES = [
    Brightness([0.1, 0.2, 0.3, 0.4, 0.5]),
    Scale([0.9, 0.8, 0.7, 0.6, 0.5]),
    MotionBlur([(10, 3), (15, 5), (15, 8), (15, 12), (20, 15)]),
    Shear([0.2, 0.4, 0.6, 0.8, 1.0]),
]


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_identity_shape_range_dtype_determinism(family, digits):
    assert family(digits, 0, gen()) is digits
    for level in range(1, 6):
        out = family(digits, level, gen(3))
        assert out.shape == digits.shape and out.dtype == digits.dtype
        assert out.min() >= 0 and out.max() <= 1
        assert torch.equal(out, family(digits, level, gen(3)))
        assert not torch.equal(out, digits)
    if family.random:
        assert not torch.equal(family(digits, 3, gen(1)), family(digits, 3, gen(2)))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_ssim_falls_as_level_rises(family, digits):
    means = [float(ssim_per_image(family(digits, k, gen(k)), digits).mean()) for k in range(6)]
    assert means[0] == pytest.approx(1.0)
    assert all(a > b for a, b in zip(means, means[1:])), means


def test_level_outside_table_is_a_user_error(digits):
    with pytest.raises(UserError, match=r"level 6 of family brightness is outside its table \(valid: 0..5\)"):
        FAMILIES[0](digits, 6)


def recentred(a):
    t = 13.5 * (1 - a.sum(axis=1))
    return AffineTransform(matrix=np.array([[a[0, 0], a[0, 1], t[0]], [a[1, 0], a[1, 1], t[1]], [0, 0, 1]]))


def test_scale_matches_skimage_warp(digits):
    for level, f in enumerate([0.9, 0.8, 0.7, 0.6, 0.5], start=1):
        out = FAMILIES[1](digits, level).numpy()[:, 0]
        tf = recentred(np.diag([1 / f, 1 / f]))
        ref = np.stack([warp(img[0].numpy().astype(float), inverse_map=tf) for img in digits])
        assert np.abs(out - ref).max() < 1e-4


def test_shear_uses_pre_020_skimage_matrix(digits):
    out = FAMILIES[3](digits, 2, gen(5)).numpy()[:, 0]
    signs = (torch.randint(0, 2, (len(digits),), generator=gen(5)) * 2 - 1).numpy()
    for img, o, s in zip(digits, out, signs):
        c = 0.4 * s
        ref = warp(img[0].numpy().astype(float), inverse_map=recentred(np.array([[1, -math.sin(c)], [0, math.cos(c)]])))
        assert np.abs(o - ref).max() < 1e-4


def motion_blur_reference(img, radius, sigma, angle_deg):
    """Per-image loop following imagecorruptions' description (shift with edge replication)."""
    width = 2 * radius + 1
    k = np.exp(-(np.arange(width) ** 2) / (2 * sigma**2))
    k /= k.sum()
    h, w = img.shape
    out = np.zeros_like(img)
    for i in range(width):
        dy = -math.ceil(i * math.sin(math.radians(angle_deg)) - 0.5)
        dx = -math.ceil(i * math.cos(math.radians(angle_deg)) - 0.5)
        if abs(dy) >= h or abs(dx) >= w:
            break
        rows = np.clip(np.arange(h) - dy, 0, h - 1)
        cols = np.clip(np.arange(w) - dx, 0, w - 1)
        out += k[i] * img[np.ix_(rows, cols)]
    return np.clip(out, 0, 1)


@pytest.mark.parametrize("level", [1, 5])
def test_motion_blur_matches_per_image_reference(digits, level):
    radius, sigma = FAMILIES[2].params[level - 1]
    out = FAMILIES[2](digits[:20], level, gen(7)).numpy()[:, 0]
    angles = uniform(gen(7), 20, -45.0, 45.0, "cpu").numpy()
    for img, o, a in zip(digits[:20], out, angles):
        ref = motion_blur_reference(img[0].numpy().astype(float), radius, sigma, a)
        assert np.abs(o - ref).max() < 1e-5


def test_brightness_matches_skimage_hsv_on_rgb():
    x = torch.rand(6, 3, 16, 16, generator=gen(0))
    out = Brightness([0.3])(x, 1).permute(0, 2, 3, 1).numpy()
    for img, o in zip(x.permute(0, 2, 3, 1).numpy().astype(float), out):
        hsv = rgb2hsv(img)
        hsv[..., 2] = np.clip(hsv[..., 2] + 0.3, 0, 1)
        assert np.abs(o - np.clip(hsv2rgb(hsv), 0, 1)).max() < 1e-5


def family_classes():
    """Every Family subclass in testnav.families, found by import (a new family is covered without a list)."""
    import importlib
    import pkgutil

    import testnav.families as pkg
    from testnav.families import Family

    for m in pkgutil.iter_modules(pkg.__path__):
        importlib.import_module(f"testnav.families.{m.name}")
    seen, todo = [], [Family]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("testnav.families") and sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


def test_every_family_declares_its_reference_and_whether_it_moves_content():
    import imagecorruptions

    from testnav.benchmarks.detection import ObjectDetection
    from testnav.errors import UserError
    from testnav.families import Family

    classes = family_classes()
    assert {"SpeckleNoise", "Shear", "DeepTestTranslate", "Synonym"} <= {c.__name__ for c in classes}
    for cls in classes:
        if cls.reference is not None:
            assert callable(getattr(imagecorruptions, cls.reference, None)), cls
        if cls.moves_content and cls.map_boxes is Family.map_boxes:
            with pytest.raises(UserError, match="moves objects"):
                ObjectDetection("d", [cls([0.2, 0.4])], 2, data=None, model=None)
    # every ImageNet-C family reproduces an imagecorruptions function, and says which
    from testnav import families

    for name in families.names(table="imagenet_c_224"):
        assert families.make(name, table="imagenet_c_224").reference, f"{name} names no reference"
