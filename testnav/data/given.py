"""Data a Python caller hands `testnav.Tester` in memory, as the benchmarks' readers give it:
images (N, C, H, W) in [0, 1] with int64 labels, identified for the ground-truth key by their
bytes (or by the files they came from). `image_tensors` accepts the containers; `checked_images`
refuses what cannot be tested, with one line saying what to give instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import UserError


def image_tensors(data, image_size=None) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    """(images (N, C, H, W) in [0, 1], labels, a file description or None) from tensors or arrays,
    a torch Dataset or DataLoader of (image, label), a Hugging Face `datasets.Dataset` with an image
    and a label column, or an image-folder path. An image is a tensor or array (C, H, W), (H, W, C) or
    (H, W), floats in [0, 1] or 8-bit, or a PIL image."""
    if isinstance(data, (str, Path)):
        from .image_folder import ImageFolder

        reader = ImageFolder(str(data), image_size=image_size)
        x, y = reader.load()
        return x, y, reader.describe()
    if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], (torch.Tensor, np.ndarray)):
        x, y = data
    elif is_hf_dataset(data):
        x, y = _stack(*hf_columns(data, IMAGE_COLUMNS, "image"), image_size)
    elif isinstance(data, torch.utils.data.DataLoader):
        x, y = _from_loader(data, image_size)
    elif isinstance(data, torch.utils.data.Dataset):
        items = [data[i] for i in range(len(data))]
        x, y = _stack([im for im, _ in items], [lbl for _, lbl in items], image_size)
    else:
        raise UserError(
            "image data: give (images, labels) tensors or arrays, a torch Dataset or DataLoader of "
            "(image, label), a Hugging Face datasets.Dataset with image and label columns, or the path of "
            f"an image folder (root/<class>/<image>); got {type(data).__name__}"
        )
    return checked_images(x, y, image_size)


IMAGE_COLUMNS = ("image", "img", "pixel_values", "images")
LABEL_COLUMNS = ("label", "labels", "fine_label", "class")


def is_hf_dataset(data) -> bool:
    """A Hugging Face `datasets.Dataset` (recognised without importing datasets)."""
    return type(data).__module__.split(".")[0] == "datasets" and hasattr(data, "column_names")


def hf_columns(data, inputs: tuple[str, ...], what: str) -> tuple[list, list]:
    """(the input column, the label column) of a Hugging Face dataset, by their usual names."""
    columns = list(data.column_names)
    x = next((c for c in inputs if c in columns), None)
    y = next((c for c in LABEL_COLUMNS if c in columns), None)
    if x is None or y is None:
        raise UserError(
            f"Hugging Face dataset with columns {', '.join(columns)}: expected an {what} column "
            f"({' or '.join(inputs)}) and a label column ({' or '.join(LABEL_COLUMNS)})"
        )
    return list(data[x]), list(data[y])


def _image(im) -> torch.Tensor:
    """One image as a (C, H, W) tensor: floats as they are, integers (8-bit values) divided by 255,
    (H, W, C) transposed."""
    t = torch.as_tensor(np.asarray(im)) if not isinstance(im, torch.Tensor) else im
    if t.dim() == 2:
        t = t[None]
    elif t.dim() == 3 and t.shape[-1] in (1, 3, 4) and t.shape[0] not in (1, 3, 4):
        t = t.permute(2, 0, 1)
    return t.float() if t.is_floating_point() else t.float() / 255.0


def _stack(images: list, labels: list, image_size=None) -> tuple[torch.Tensor, torch.Tensor]:
    if images and all(hasattr(im, "convert") and hasattr(im, "size") for im in images):  # PIL images
        from . import to_tensor

        x = to_tensor([im.convert("RGB") for im in images], image_size)  # as the readers convert them
    else:
        shapes = sorted({tuple(_image(im).shape) for im in images[:1000]})
        if len(shapes) > 1:
            raise UserError(f"image data: images of {len(shapes)} shapes (e.g. {shapes[0]} and {shapes[-1]}): one size")
        x = torch.stack([_image(im) for im in images]) if images else torch.zeros(0, 1, 1, 1)
    return x, torch.as_tensor([int(lbl) for lbl in labels])


def _from_loader(loader, image_size=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Every batch of a DataLoader, in its order (which must not be shuffled: D is one fixed set)."""
    if isinstance(loader.sampler, torch.utils.data.RandomSampler):
        raise UserError("image data: the DataLoader shuffles (shuffle=True); give one with shuffle=False")
    xs, ys = [], []
    for batch in loader:
        if isinstance(batch, dict):
            batch = (
                next((batch[c] for c in IMAGE_COLUMNS if c in batch), None),
                next((batch[c] for c in LABEL_COLUMNS if c in batch), None),
            )
        if not isinstance(batch, (tuple, list)) or len(batch) < 2 or batch[0] is None or batch[1] is None:
            raise UserError("image data: a DataLoader must yield (images, labels) batches (or dicts with image, label)")
        images, labels = batch[0], batch[1]
        if isinstance(images, torch.Tensor) and images.dim() == 4:
            xs.append(images.float() / 255.0 if images.dtype == torch.uint8 else images.float())
            ys.append(torch.as_tensor(labels).long().ravel())
        else:
            x, y = _stack(list(images), list(torch.as_tensor(labels).ravel().tolist()), image_size)
            xs.append(x)
            ys.append(y)
    if not xs:
        raise UserError("image data: the DataLoader yielded no batch")
    return torch.cat(xs), torch.cat(ys)


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
