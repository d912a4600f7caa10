"""Data a Python caller hands `testnav.Tester` in memory, as the benchmarks' readers give it:
images (N, C, H, W) in [0, 1] with int64 labels, identified for the ground-truth key by their
bytes (or by the files they came from). `image_tensors` accepts the containers; `checked_images`
refuses what cannot be tested, with one line saying what to give instead."""

from __future__ import annotations

from pathlib import Path

import torch

from ..errors import UserError


def image_tensors(data, image_size=None) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    """(images (N, C, H, W) in [0, 1], labels, a file description or None) from tensors, a torch
    Dataset of (image, label) or an image-folder path."""
    if isinstance(data, (str, Path)):
        from .image_folder import ImageFolder

        reader = ImageFolder(str(data), image_size=image_size)
        x, y = reader.load()
        return x, y, reader.describe()
    if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], torch.Tensor):
        x, y = data
    elif isinstance(data, torch.utils.data.Dataset):
        from . import to_tensor

        items = [data[i] for i in range(len(data))]
        images = [im for im, _ in items]
        if all(isinstance(im, torch.Tensor) for im in images):
            x = torch.stack([im.float() for im in images])
        else:
            x = to_tensor([im.convert("RGB") for im in images], image_size)  # PIL images, as the readers convert them
        y = torch.as_tensor([int(lbl) for _, lbl in items])
    else:
        raise UserError(
            "image data: give (images, labels) tensors, a torch Dataset of (image, label), "
            "or the path of an image folder (root/<class>/<image>)"
        )
    return checked_images(x, y, image_size)


def checked_images(x, y, image_size=None) -> tuple[torch.Tensor, torch.Tensor, None]:
    """Images and labels checked before any work (one line each: an empty set, a layout, a range,
    non-finite pixels, labels that are not class indices), channels-last images transposed where
    the layout is unambiguous, resized to `image_size` when given."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    if len(x) == 0 or y.numel() == 0:
        raise UserError(f"image data: the data set is empty ({len(x)} images, {y.numel()} labels); give at least one")
    if y.is_floating_point() and not torch.equal(y, y.round()) or y.is_complex() or y.dtype == torch.bool:
        raise UserError(f"image data: labels must be class indices (whole numbers), got {y.dtype} values")
    y = y.long().ravel()
    if x.dim() == 3:
        x = x[:, None]
    if x.dim() == 4:
        x = channels_first(x)
    if x.dim() != 4 or len(x) != len(y):
        raise UserError(
            f"image data: images of shape {tuple(x.shape)} and {len(y)} labels (expected (N, C, H, W) and N)"
        )
    if (y < 0).any():
        raise UserError(f"image data: label {int(y.min())} is negative (labels are class indices 0..K-1)")
    if not x.is_floating_point():
        raise UserError(f"image data: images must be floats in [0, 1], got {x.dtype} (divide 8-bit images by 255)")
    finite = torch.isfinite(x)
    if not finite.all():
        bad = (~finite).flatten(1).any(1)
        raise UserError(
            f"image data: non-finite pixel values (NaN or ±inf) in {int(bad.sum())} of {len(x)} images "
            f"(the first: image {int(bad.nonzero()[0])}); replace or drop them"
        )
    if float(x.min()) < 0 or float(x.max()) > 1:
        raise UserError(
            f"image data: images must be floats in [0, 1], got values from {float(x.min()):g} to "
            f"{float(x.max()):g} (divide 8-bit images by 255)"
        )
    if image_size is not None and tuple(x.shape[-2:]) != tuple(_size(image_size)):
        import torch.nn.functional as F

        x = F.interpolate(x, size=_size(image_size), mode="bilinear", antialias=True, align_corners=False).clamp(0, 1)
    return x.float().contiguous(), y, None


CHANNELS = (1, 3)  # grayscale or RGB: what the families and the models take


def channels_first(x: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) as given; (N, H, W, C) transposed, with a note, where only the last axis can hold
    the channels; anything else refused with its shape."""
    first, last = x.shape[1] in CHANNELS, x.shape[3] in CHANNELS
    if first and not last:
        return x
    shape = tuple(x.shape)
    if last and not first:
        from ..errors import note

        x = x.permute(0, 3, 1, 2)
        note(f"image data: images of shape {shape} read as (N, H, W, C) and transposed to {tuple(x.shape)}")
        return x
    if first and last:
        raise UserError(
            f"image data: images of shape {shape}: axis 1 and axis 3 could both hold the channels; "
            f"give them as (N, C, H, W)"
        )
    raise UserError(
        f"image data: images of shape {shape} have no channel axis of size 1 or 3 "
        f"(expected (N, C, H, W) or (N, H, W, C) with C = 1 or 3)"
    )


def _size(image_size) -> tuple[int, int]:
    return (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)


class TensorData:
    """A data reader over tensors in memory, identified by their bytes (or by the files they came from)."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor, description: dict | None = None):
        self.images, self.labels, self.description = images, labels, description

    def load(self):
        return self.images, self.labels

    def describe(self) -> dict:
        if self.description is not None:
            return self.description
        import hashlib

        h = hashlib.sha256(self.images.cpu().numpy().tobytes())
        h.update(self.labels.cpu().numpy().tobytes())
        return {"tensors": list(self.images.shape), "sha256": h.hexdigest()[:16]}
