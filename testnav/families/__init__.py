"""Perturbation families T_i. One family per module, built by name with `make` from the tables of
conf/families (or from YAML with its `_target_`).

A family maps a batch (B, C, H, W) of float images in [0, 1] to a batch of the same
shape, dtype and device, at an integer level: level 0 is the identity, level k applies the
k-th entry of the family's severity table. Random families draw their per-image randomness
from a CPU `torch.Generator` handed in by the caller, so the same generator seed gives the
same output on CPU and GPU, and the ground-truth pass can seed each prefix independently.

On the CPU a batch is processed in blocks of about `CPU_BLOCK_ELEMENTS` values (`cpu_blocks`)
so that every temporary stays cache-resident: for elementwise and separable families this is
3–30× faster than one pass over a 1,000-image batch, whose temporaries stream through memory
(and page-fault on every allocation). Deterministic families are blocked here; random ones
draw their randomness for the whole batch first (so the stream does not depend on the block
size) and block their own arithmetic. On a GPU the whole batch is one block.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod

import numpy as np
import torch

from ..errors import UserError
from .buffers import batch_buffer


class Family(ABC):
    name: str = "family"
    random: bool = False
    writes_out: bool = False  # apply(x, param, generator, out=None) writes into `out` when given (CPU blocks)
    reference: str | None = None  # the imagecorruptions function it reproduces, which tests and bench compare with
    moves_content: bool = False  # geometric: objects move, so a detection ground truth needs map_boxes
    param_format: str | None = None  # a table entry as a person reads it, e.g. "σ {}" (None: the values)

    def __init__(self, params, name: str | None = None):
        self.params = [tuple(p) if isinstance(p, (list, tuple)) else p for p in params]
        if name:
            self.name = name

    @property
    def max_level(self) -> int:
        return len(self.params)

    def __call__(self, x: torch.Tensor, level: int, generator: torch.Generator | None = None) -> torch.Tensor:
        if level == 0:
            return x
        if not 0 < level <= self.max_level:
            raise UserError(f"level {level} of family {self.name} is outside its table (valid: 0..{self.max_level})")
        if generator is None:
            generator = torch.Generator().manual_seed(0)
        param = self.params[level - 1]
        if self.random:
            return self.apply(x, param, generator)
        if self.writes_out:
            return blockwise(lambda xb, out: self.apply(xb, param, generator, out=out), x, into=True)
        return blockwise(lambda xb: self.apply(xb, param, generator), x)

    @abstractmethod
    def apply(self, x: torch.Tensor, param, generator: torch.Generator) -> torch.Tensor:
        """The perturbation at one entry `param` of the severity table (level ≥ 1)."""

    def level_label(self, level: int) -> str:
        """Level `level` as a person reads it: its table entry through `param_format` ("σ 1.5",
        "q 80", "r 10, σ 3"), or the bare values; "identity" at level 0."""
        level = int(level)
        if level == 0:
            return "identity"
        if not 0 < level <= self.max_level:
            raise UserError(f"level {level} of family {self.name} is outside its table (valid: 0..{self.max_level})")
        param = self.params[level - 1]
        values = [format(v, "g") if isinstance(v, float) else str(v) for v in np.ravel(np.asarray(param, dtype=object))]
        if not self.param_format or self.param_format.count("{}") > len(values):
            return ", ".join(values)
        text = self.param_format.format(*values)
        return text[:-1] if text.startswith("1 ") and text.endswith("s") else text  # "1 word", "2 words"

    def map_boxes(self, boxes, level: int, size: tuple[int, int], min_size: float = 1.0):
        """Detection boxes (K, 5) (class, x1, y1, x2, y2) after this family at `level` on images of
        `size` (H, W). A family that leaves content in place leaves the boxes; one that moves it
        must say where they go."""
        if self.moves_content:
            raise NotImplementedError(f"{type(self).__name__} moves content but has no map_boxes")
        return boxes

    def describe(self) -> dict:
        """What the ground-truth cache key must hash for this family."""
        return {
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
            "name": self.name,
            "params": list(self.params),
        }


CPU_BLOCK_ELEMENTS = 1 << 18


def cpu_blocks(x: torch.Tensor) -> list[slice]:
    """Slices of the batch dimension holding ~CPU_BLOCK_ELEMENTS values each on the CPU; one
    slice (the whole batch) on any other device."""
    if x.device.type != "cpu" or x.dim() == 0 or len(x) == 0:
        return [slice(None)]
    per = max(1, CPU_BLOCK_ELEMENTS // max(1, x[0].numel()))
    return [slice(i, i + per) for i in range(0, len(x), per)]


def blockwise(fn, x: torch.Tensor, *per_image: torch.Tensor, into: bool = False) -> torch.Tensor:
    """fn(x[s], *(t[s] for t in per_image)) over `cpu_blocks(x)`, written block by block into
    one `batch_buffer`: each block's result is copied out while still in cache (a concatenation
    would keep every block alive and read them all back from memory). `into`: the output has x's
    shape and dtype and fn takes `out=` (its slice of the buffer, None for a single block) and
    writes its result there, which saves the copy and the block's own result tensor."""
    blocks = cpu_blocks(x)
    if len(blocks) == 1:
        return fn(x, *per_image, out=None) if into else fn(x, *per_image)
    if into:
        out = batch_buffer(x.shape, x.dtype)
        for s in blocks:
            fn(x[s], *(t[s] for t in per_image), out=out[s])
        return out
    out = None
    for s in blocks:
        y = fn(x[s], *(t[s] for t in per_image))
        if out is None:
            out = batch_buffer((len(x), *y.shape[1:]), y.dtype)
        out[s] = y
    return out


def bit_stream(generator: torch.Generator) -> np.random.SFC64:
    """A fast stream of random bits seeded by one draw from the caller's torch generator, for
    the families that need bytes by the million (speckle noise, glass blur): numpy's SFC64 gives
    64 bits in well under half the time of torch's Mersenne Twister (`random_` over the int64
    range). SFC64 and numpy's SeedSequence are specified bit for bit, so the stream is
    the same on every machine; the bits are drawn on the CPU and moved, so on every device."""
    seed = int(torch.empty((), dtype=torch.int64).random_(generator=generator))
    return np.random.SFC64(seed)


def random_bytes(n: int, bits: np.random.SFC64) -> torch.Tensor:
    """The next n uniform random bytes (uint8, CPU) of a `bit_stream`, 8 per 64-bit word, in
    order: draws split at multiples of 8 bytes concatenate to one."""
    words = bits.random_raw(-(-n // 8))
    return torch.from_numpy(words.view(np.uint8))[:n]


def uniform(generator: torch.Generator, n: int, low: float, high: float, device) -> torch.Tensor:
    """n uniform draws on the CPU generator, moved to `device` (identical on every device)."""
    return (low + (high - low) * torch.rand(n, generator=generator, dtype=torch.float64)).to(device)


def random_signs(generator: torch.Generator, n: int, device) -> torch.Tensor:
    return (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).to(device=device, dtype=torch.float64)


# The published per-level tables a family is built with by name: conf/families/*.yaml, one table
# a file (a `families:` list). A name is the family's own `name` (what queries such as
# `brightness >= 2` refer to). Which tables a name is looked up in follows the data.
IMAGE_TABLES = {32: "imagenet_c_32", 64: "imagenet_c_64", 224: "imagenet_c_224"}


def tables() -> list[str]:
    """Every table of conf/families."""
    from ..paths import CONF

    return sorted(p.stem for p in (CONF / "families").glob("*.yaml") if not p.stem.startswith("_"))


@functools.cache
def table_nodes(which: str) -> dict[str, dict]:
    """{family name: its YAML node (_target_, params, …)} of one table of conf/families."""
    from hydra.utils import get_class
    from omegaconf import OmegaConf

    from ..paths import CONF

    if which not in tables():
        raise UserError(f"unknown family table '{which}' (valid: {', '.join(tables())})")
    nodes = OmegaConf.to_container(OmegaConf.load(CONF / "families" / f"{which}.yaml"), resolve=False)["families"]
    return {node.get("name") or get_class(node["_target_"]).name: node for node in nodes}


def tables_for(modality: str = "image", image_size=None, channels: int = 3) -> list[str]:
    """The tables a name is looked up in, most specific first: ImageNet-C's nearest the image
    size (then the others), MNIST-C's first for small grayscale images; QQP's for text, ReCode's for code."""
    if modality in ("text", "code"):
        return [modality]
    side = min(image_size) if isinstance(image_size, (tuple, list)) else image_size
    nearest = min(IMAGE_TABLES, key=lambda k: abs(k - (side or 224)))
    image = [IMAGE_TABLES[nearest]] + [IMAGE_TABLES[k] for k in IMAGE_TABLES if k != nearest]
    return (["mnist_c"] + image) if channels == 1 and side is not None and side <= 32 else image


def names(modality: str = "image", image_size=None, channels: int = 3, table: str | None = None) -> list[str]:
    """The family names `make` knows for such data (or in one table)."""
    which = [table] if table else tables_for(modality, image_size, channels)
    return sorted({n for t in which for n in table_nodes(t)})


def make(name, table: str | None = None, modality: str = "image", image_size=None, channels: int = 3, **overrides):
    """The family `name` with its published table: from `table` (a conf/families file) if given,
    else from the tables for the data (`tables_for`); `overrides` replace its YAML's settings
    (e.g. params). A Family object is returned as it is."""
    from ..registry import instantiate

    if isinstance(name, Family):
        return name
    if not isinstance(name, str):
        raise UserError(f"family {name!r}: give a name (testnav.families.names()) or a testnav.families.Family")
    which = [table] if table else tables_for(modality, image_size, channels)
    for t in which:
        if name in table_nodes(t):
            return instantiate({**table_nodes(t)[name], **overrides})
    where = f"table {table}" if table else f"{modality} data"
    raise UserError(
        f"unknown family '{name}' for {where} (valid: {', '.join(names(modality, image_size, channels, table))})"
    )
