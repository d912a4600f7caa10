"""Run the reference library (imagecorruptions-imaug, test extra) at any parameter table.

imagecorruptions only holds the ImageNet (224 px) tables, hard-coded as a literal inside
each corruption function. To compare with the Tiny-ImageNet-C (64 px) or CIFAR-10-C (32 px)
tables we run the library's *own* function with only its table swapped:

* for a function whose table is one 5-tuple constant (every corruption used here except
  zoom_blur) a copy of the function is made whose code object has that constant replaced;
* zoom_blur builds its five factor lists with five `np.arange` calls, so its copy sees a
  `np` whose `arange` returns the requested (start, stop, step) ranges in call order.

Nothing else of the reference code changes (its per-channel handling, clipping, PIL calls).
Only tests and the bench scripts use this module (so it lives beside the tests, not in the package); importing it does not import
imagecorruptions.
"""

from __future__ import annotations

import types

import numpy as np


def _module():
    import imagecorruptions.corruptions as corruptions  # test-only dependency

    return corruptions


def reference_table(name: str) -> list:
    """The ImageNet table hard-coded in imagecorruptions' `name` (not for zoom_blur)."""
    func = getattr(_module(), name)
    tables = [c for c in func.__code__.co_consts if isinstance(c, tuple) and len(c) == 5]
    if len(tables) != 1:
        raise ValueError(f"cannot find the severity table of imagecorruptions.{name}")
    return list(tables[0])


class _ArangeTable:
    """Stands in for numpy inside a copied zoom_blur: arange(...) returns the i-th range of
    the table, in call order; every other attribute is numpy's."""

    def __init__(self, table):
        self._table = [tuple(float(v) for v in t) for t in table]
        self._calls = 0

    def arange(self, *args, **kwargs):
        start, stop, step = self._table[self._calls % len(self._table)]
        self._calls += 1
        return np.arange(start, stop, step)

    def __getattr__(self, item):
        return getattr(np, item)


def reference_function(name: str, table=None):
    """imagecorruptions' corruption `name`, optionally with its severity table replaced."""
    func = getattr(_module(), name)
    if table is None:
        return func
    table = tuple(tuple(t) if isinstance(t, (list, tuple)) else t for t in table)
    if name == "zoom_blur":

        def zoom_blur(x, severity=1):
            glob = dict(func.__globals__, np=_ArangeTable(table))
            return types.FunctionType(func.__code__, glob, func.__name__, func.__defaults__)(x, severity)

        return zoom_blur
    code = func.__code__
    old = tuple(reference_table(name))
    consts = tuple(table if c == old else c for c in code.co_consts)
    return types.FunctionType(
        code.replace(co_consts=consts), func.__globals__, func.__name__, func.__defaults__, func.__closure__
    )


def reference_corrupt(images: np.ndarray, name: str, severity: int, table=None, seed: int = 0) -> np.ndarray:
    """Apply the reference per image to (N, H, W, 3) uint8 images, as `imagecorruptions.corrupt`
    does (PIL image in, `np.uint8` truncation out). Random corruptions are seeded per image:
    numpy's global RNG with seed + i, and glass_blur's numba RNG through its `seed` argument."""
    from PIL import Image

    func = reference_function(name, table)
    out = []
    for i, img in enumerate(images):
        np.random.seed(seed + i)
        kwargs = {"seed": seed + i} if name == "glass_blur" else {}
        out.append(np.uint8(func(Image.fromarray(img), severity, **kwargs)))
    return np.stack(out)
