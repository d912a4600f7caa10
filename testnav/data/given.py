"""Data a Python caller hands `testnav.Tester` in memory, as the benchmarks' readers give it:
images (N, C, H, W) in [0, 1] with int64 labels, identified for the ground-truth key by their
bytes (or by the files they came from). `image_tensors` accepts the containers; `checked_images`
refuses what cannot be tested, with one line saying what to give instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import UserError


def image_tensors(data, image_size=None, label2id=None) -> tuple[torch.Tensor, torch.Tensor, dict | None]:
    """(images (N, C, H, W) in [0, 1], labels, a file description or None) from tensors or arrays,
    (a list of images, labels), [(image, label), …], a torch Dataset or DataLoader of (image, label),
    a Hugging Face `datasets.Dataset` with an image and a label column, or an image-folder path. An
    image is a tensor or array (C, H, W), (H, W, C) or (H, W), floats in [0, 1] or 8-bit (divided by
    255, with a note), or a PIL image (grayscale ones kept grayscale when all are). Labels are class
    indices, integers written as text, or class names the model's `label2id` maps (`label_tensor`)."""
    if isinstance(data, (str, Path)):
        from .image_folder import ImageFolder

        reader = ImageFolder(str(data), image_size=image_size)
        x, y = reader.load()
        return x, y, reader.describe()
    if isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], (torch.Tensor, np.ndarray)):
        x, y = eight_bit(data[0]), label_tensor(data[1], label2id)
    elif isinstance(data, (tuple, list)) and len(data) == 2 and is_image_list(data[0]):
        images, labels = list(data[0]), list(data[1]) if not isinstance(data[1], torch.Tensor) else data[1]
        if len(images) != len(labels):
            raise UserError(f"image data: {len(images)} images but {len(labels)} labels")
        from ..errors import note

        note(f"image data: a list of {len(images)} {kind_of(images[0])} images read as one (N, C, H, W) batch")
        x, y = _stack(images, labels, image_size, label2id)
    elif isinstance(data, (tuple, list)) and data and all(is_pair(item) for item in data):
        x, y = _stack([im for im, _ in data], [lbl for _, lbl in data], image_size, label2id)
    elif is_hf_dataset(data):
        x, y = _stack(*hf_columns(data, IMAGE_COLUMNS, "image"), image_size, label2id)
    elif isinstance(data, torch.utils.data.DataLoader):
        x, y = _from_loader(data, image_size)
    elif isinstance(data, torch.utils.data.Dataset):
        items = [data[i] for i in range(len(data))]
        x, y = _stack([im for im, _ in items], [lbl for _, lbl in items], image_size, label2id)
    else:
        got = type(data).__name__
        if isinstance(data, (tuple, list)) and data:
            got += f" of {len(data)} {type(data[0]).__name__}" + ("s" if len(data) > 1 else "")
        raise UserError(
            "image data: give (images, labels) with images a tensor, an array or a list of images, "
            "[(image, label), …], a torch Dataset or DataLoader of (image, label), a Hugging Face "
            f"datasets.Dataset with image and label columns, or the path of an image folder; got {got}"
        )
    return checked_images(x, y, image_size)


def is_pil(im) -> bool:
    return hasattr(im, "convert") and hasattr(im, "size") and hasattr(im, "mode")


def is_image(im) -> bool:
    return is_pil(im) or (isinstance(im, (torch.Tensor, np.ndarray)) and im.ndim in (2, 3))


def is_image_list(seq) -> bool:
    return isinstance(seq, (list, tuple)) and len(seq) > 0 and all(is_image(im) for im in seq[:1000])


def is_pair(item) -> bool:
    return isinstance(item, (tuple, list)) and len(item) == 2 and is_image(item[0])


def kind_of(im) -> str:
    return f"PIL ({im.mode})" if is_pil(im) else f"{type(im).__name__} {tuple(im.shape)}"


def eight_bit(x):
    """Images as given; 8-bit integers (uint8, 0..255) divided by 255, with a note."""
    dtype = getattr(x, "dtype", None)
    if dtype in (np.uint8, torch.uint8):
        from ..errors import note

        note("image data: 8-bit images (uint8) divided by 255 to floats in [0, 1]")
        return torch.as_tensor(np.asarray(x) if isinstance(x, np.ndarray) else x).float() / 255.0
    return x


def label_tensor(labels, label2id=None) -> torch.Tensor:
    """Class indices from labels as given: whole numbers as they are; integers written as text ("3")
    read as numbers, and names through the model's `label2id`, each with a note (the mapping in it);
    other text refused in one line."""
    if isinstance(labels, torch.Tensor):
        return labels
    values = list(np.asarray(labels, dtype=object).ravel()) if not isinstance(labels, list) else list(labels)
    if not any(isinstance(v, (str, bytes, np.str_)) for v in values):
        return torch.as_tensor(np.asarray(labels))
    from ..errors import note

    text = [v.decode() if isinstance(v, bytes) else str(v) for v in values]
    if all(t.strip().lstrip("-").isdigit() for t in text):
        note(f"image data: labels written as text ({', '.join(sorted(set(text))[:5])}, …) read as class indices")
        return torch.tensor([int(t) for t in text], dtype=torch.int64)
    names = {str(k): int(v) for k, v in (label2id or {}).items()}
    unknown = sorted(set(text) - names.keys())
    if names and not unknown:
        used = sorted(set(text), key=lambda t: names[t])
        note("image data: labels mapped to the model's classes: " + ", ".join(f"{t} → {names[t]}" for t in used))
        return torch.tensor([names[t] for t in text], dtype=torch.int64)
    shown = ", ".join(repr(t) for t in sorted(set(text))[:4])
    where = (
        f"not names in the model's label2id ({', '.join(list(names)[:6])})"
        if names
        else "and the model names no classes"
    )
    raise UserError(
        f"image data: labels are text ({shown}, …) {where}: give class indices 0..K−1 in the order of the "
        "model's outputs"
    )


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


GRAY = ("1", "L", "I", "I;16", "F")  # PIL's single-channel modes


def _stack(images: list, labels: list, image_size=None, label2id=None) -> tuple[torch.Tensor, torch.Tensor]:
    if images and all(is_pil(im) for im in images):  # PIL images
        from . import to_tensor

        gray = sum(im.mode in GRAY for im in images)
        if gray == len(images):  # all grayscale: one channel, as the model that reads them expects
            x = to_tensor([im.convert("L") for im in images], image_size)
        else:
            if gray:
                from ..errors import note

                note(f"image data: {gray} of {len(images)} PIL images are grayscale; all are read as RGB")
            x = to_tensor([im.convert("RGB") for im in images], image_size)  # as the readers convert them
    else:
        shapes = sorted({tuple(_image(im).shape) for im in images[:1000]})
        if len(shapes) > 1:
            raise UserError(f"image data: images of {len(shapes)} shapes (e.g. {shapes[0]} and {shapes[-1]}): one size")
        x = torch.stack([_image(im) for im in images]) if images else torch.zeros(0, 1, 1, 1)
    return x, label_tensor(labels, label2id)


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
